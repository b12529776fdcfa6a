# Convention: the Annotated Transformer — a boolean keep-mask (subsequent_mask == 0 hides the future)
# and scores.masked_fill(mask == 0, -1e9): a large finite fill instead of -inf. numpy, float64.
import numpy as np


def project(X, W):
    return np.matmul(X, W)


def scaled_scores(Q, K):
    d_k = Q.shape[-1]
    return np.matmul(Q, K.T) / np.sqrt(d_k)


def subsequent_keep(n):
    return np.tril(np.ones((n, n))) == 1  # True where a token may look


def causal_mask(n):
    return np.where(subsequent_keep(n), 0.0, -1e9)


def softmax(S):
    z = S - S.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def attention_weights(Q, K, causal=True):
    scores = scaled_scores(Q, K)
    if causal:
        scores = np.where(subsequent_keep(scores.shape[0]), scores, -1e9)  # masked_fill(mask == 0, -1e9)
    return softmax(scores)


def attention_head(Q, K, V, causal=True):
    p_attn = attention_weights(Q, K, causal)
    return np.matmul(p_attn, V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(project(X, q), project(X, k), project(X, v), causal) for q, k, v in zip(W_Q, W_K, W_V)]
    return np.concatenate(heads, axis=-1) @ W_O
