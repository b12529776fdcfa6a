"""Mistake [loop-skips-last-row] in softmax: for (i in 1:(nrow(S) - 1)) stops one row early (and counts 1, 0 when n
= 1).
"""

import numpy as np


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)


def softmax(S):
    A = np.array(S, dtype=float)
    for i in range(max(len(A) - 1, 1)):  # as R's 1:(n - 1): row 1 still when n = 1
        e = np.exp(A[i] - A[i].max())
        A[i] = e / e.sum()
    return A


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S + causal_mask(S.shape[0])
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(project(X, wq), project(X, wk), project(X, wv), causal)
             for wq, wk, wv in zip(W_Q, W_K, W_V, strict=True)]
    return np.concatenate(heads, axis=1) @ W_O
