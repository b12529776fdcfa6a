# Convention: heads kept as an (h, n, d_k) array and reshaped to (n, h·d_k) without the transpose
# (the catalog's concat-wrong-axis, the way a reshape-minded student writes it).
import numpy as np


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)


def softmax(S):
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S + causal_mask(S.shape[0])
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = np.stack([attention_head(X @ q, X @ k, X @ v, causal) for q, k, v in zip(W_Q, W_K, W_V)])  # (h, n, d_k)
    return heads.reshape(X.shape[0], -1) @ W_O  # missing .transpose(1, 0, 2)
