# Convention: the UvA deep-learning tutorial — attn_logits.masked_fill(mask == 0, -9e15), with the
# logits divided by math.sqrt(d_k); numpy port, float64.
import math

import numpy as np


def project(X, W):
    return X.dot(W)


def scaled_scores(Q, K):
    return Q.dot(K.T) / math.sqrt(Q.shape[-1])


def causal_mask(n):
    mask = np.tril(np.ones((n, n), dtype=int))
    return np.where(mask == 0, -9e15, 0.0)


def softmax(S):
    S = S - S.max(axis=1, keepdims=True)
    return np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    attn_logits = scaled_scores(Q, K)
    if causal:
        keep = np.tril(np.ones(attn_logits.shape, dtype=int))
        attn_logits = np.where(keep == 0, -9e15, attn_logits)
    return softmax(attn_logits)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal).dot(V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    values = [attention_head(project(X, W_Q[i]), project(X, W_K[i]), project(X, W_V[i]), causal) for i in range(len(W_Q))]
    return np.concatenate(values, axis=1).dot(W_O)
