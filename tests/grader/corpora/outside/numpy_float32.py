# Convention: everything cast to float32 first (what a student copying torch defaults into numpy does);
# -inf mask, stable softmax.
import numpy as np

f32 = np.float32


def project(X, W):
    return X.astype(f32) @ W.astype(f32)


def scaled_scores(Q, K):
    Q, K = Q.astype(f32), K.astype(f32)
    return Q @ K.T / f32(np.sqrt(Q.shape[1]))


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf, dtype=f32), k=1)


def softmax(S):
    S = np.asarray(S, dtype=f32)
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    return softmax(S + causal_mask(S.shape[0]) if causal else S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V.astype(f32)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(project(X, q), project(X, k), project(X, v), causal) for q, k, v in zip(W_Q, W_K, W_V)]
    return np.concatenate(heads, axis=1) @ W_O.astype(f32)
