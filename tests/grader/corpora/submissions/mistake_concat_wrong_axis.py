"""Mistake [concat-wrong-axis]: heads stacked as rows, then reshaped to fit W_O."""

import numpy as np


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)


def softmax(S):
    S = np.asarray(S)
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
    heads = [
        attention_head(project(X, wq), project(X, wk), project(X, wv), causal)
        for wq, wk, wv in zip(W_Q, W_K, W_V)
    ]
    n = X.shape[0]
    return np.concatenate(heads, axis=0).reshape(n, -1) @ W_O
