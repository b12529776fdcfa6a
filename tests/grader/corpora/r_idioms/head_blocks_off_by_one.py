"""Error in multi_head_attention: the columns ((h - 1) * d_v):(h * d_v) are one too many from the second head on.
"""

import numpy as np


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)


def softmax(S):
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S + causal_mask(S.shape[0])
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    d_v = W_V[0].shape[1]
    C = np.zeros((X.shape[0], len(W_Q) * d_v))
    for h in range(1, len(W_Q) + 1):
        cols = np.arange((h - 1) * d_v, h * d_v + 1)  # as R's ((h - 1) * d_v):(h * d_v)
        cols = cols[cols > 0] - 1  # R drops index 0 and counts from 1
        head = attention_head(project(X, W_Q[h - 1]), project(X, W_K[h - 1]), project(X, W_V[h - 1]), causal)
        if head.size != X.shape[0] * len(cols):
            raise ValueError('number of items to replace is not a multiple of replacement length')
        C[:, cols] = head
    return C @ W_O
