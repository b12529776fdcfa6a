# Convention: the TensorFlow Transformer tutorial — look_ahead_mask = 1 - band_part(ones, -1, 0)
# (1 marks the future) and scaled_attention_logits += mask * -1e9; numpy port, float64.
import numpy as np


def look_ahead(n):
    return 1 - np.tril(np.ones((n, n)))  # 1 where the position is in the future


def project(X, W):
    return np.einsum("nd,dk->nk", X, W)


def scaled_scores(Q, K):
    dk = np.float64(K.shape[-1])
    return np.matmul(Q, K.T) / np.sqrt(dk)


def causal_mask(n):
    return look_ahead(n) * -1e9


def softmax(S):
    S = S - np.max(S, axis=-1, keepdims=True)
    e = np.exp(S)
    return e / np.sum(e, axis=-1, keepdims=True)


def attention_weights(Q, K, causal=True):
    logits = scaled_scores(Q, K)
    if causal:
        logits += look_ahead(logits.shape[0]) * -1e9
    return softmax(logits)


def attention_head(Q, K, V, causal=True):
    return np.matmul(attention_weights(Q, K, causal), V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(project(X, a), project(X, b), project(X, c), causal) for a, b, c in zip(W_Q, W_K, W_V)]
    return project(np.concatenate(heads, axis=-1), W_O)
