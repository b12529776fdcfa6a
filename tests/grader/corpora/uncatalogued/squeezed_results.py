# Uncatalogued, shape-dependent: every step returns np.squeeze(...) "to tidy the shapes", which drops the
# axis of one token (or of one column): right on every case with n > 1 and d_k > 1.
import numpy as np


def project(X, W):
    return np.squeeze(X @ W)


def scaled_scores(Q, K):
    return np.squeeze(np.atleast_2d(Q) @ np.atleast_2d(K).T / np.sqrt(np.atleast_2d(Q).shape[1]))


def causal_mask(n):
    return np.squeeze(np.triu(np.full((n, n), -np.inf), k=1))


def softmax(S):
    S = np.atleast_2d(S)
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return np.squeeze(e / e.sum(axis=1, keepdims=True))


def attention_weights(Q, K, causal=True):
    S = np.atleast_2d(scaled_scores(Q, K))
    if causal:
        S = S + np.atleast_2d(causal_mask(S.shape[0]))
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return np.squeeze(np.atleast_2d(attention_weights(Q, K, causal)) @ V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [np.atleast_2d(attention_head(X @ q, X @ k, X @ v, causal)) for q, k, v in zip(W_Q, W_K, W_V)]
    return np.squeeze(np.concatenate(heads, axis=1) @ W_O)
