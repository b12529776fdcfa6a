# Convention: a CS231n-style MultiHeadAttention port — weights stacked into (d_model, d_model)
# matrices, d_k = d_model // num_heads, view (n, h, d_k) and permute; -inf mask via np.tril. float64.
import math

import numpy as np


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / math.sqrt(Q.shape[1])


def causal_mask(n):
    m = np.zeros((n, n))
    m[np.tril(np.ones((n, n))) == 0] = -np.inf
    return m


def softmax(S):
    S = np.asarray(S, dtype=float)
    S = S - np.max(S, axis=1, keepdims=True)
    E = np.exp(S)
    return E / np.sum(E, axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S + causal_mask(S.shape[0])
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    N, E = X.shape
    H = len(W_Q)
    d_k = E // H
    query = (X @ np.hstack(W_Q)).reshape(N, H, d_k).transpose(1, 0, 2)  # (H, N, d_k)
    key = (X @ np.hstack(W_K)).reshape(N, H, d_k).transpose(1, 0, 2)
    value = (X @ np.hstack(W_V)).reshape(N, H, d_k).transpose(1, 0, 2)
    scores = query @ key.transpose(0, 2, 1) / math.sqrt(d_k)  # (H, N, N)
    if causal:
        scores = scores + causal_mask(N)
    scores = scores - scores.max(axis=-1, keepdims=True)
    attn = np.exp(scores)
    attn = attn / attn.sum(axis=-1, keepdims=True)
    out = (attn @ value).transpose(1, 0, 2).reshape(N, H * d_k)  # (N, H·d_k)
    return out @ W_O
