# Convention: nanoGPT's c_attn — one fused (d_model, 3·d_model) QKV matrix, a single projection,
# then split into q, k, v and per head with reshape/transpose; d_k derived as d_model // h. numpy, float64.
import numpy as np


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return (Q @ K.T) * (1.0 / np.sqrt(K.shape[-1]))


def causal_mask(n):
    bias = np.tril(np.ones((n, n)))
    return np.where(bias == 0, -np.inf, 0.0)


def softmax(S):
    S = S - S.max(axis=-1, keepdims=True)
    e = np.exp(S)
    return e / e.sum(axis=-1, keepdims=True)


def attention_weights(Q, K, causal=True):
    att = scaled_scores(Q, K)
    if causal:
        att = att + causal_mask(att.shape[-1])
    return softmax(att)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    T, C = X.shape
    h = len(W_Q)
    hs = C // h  # head size from d_model / h, as the course defines d_k
    c_attn = np.concatenate([np.concatenate(W_Q, axis=1), np.concatenate(W_K, axis=1), np.concatenate(W_V, axis=1)], axis=1)  # (C, 3C)
    q, k, v = np.split(X @ c_attn, 3, axis=1)  # each (T, C)
    q = q.reshape(T, h, hs).transpose(1, 0, 2)  # (h, T, hs)
    k = k.reshape(T, h, hs).transpose(1, 0, 2)
    v = v.reshape(T, h, hs).transpose(1, 0, 2)
    y = np.stack([attention_head(q[i], k[i], v[i], causal) for i in range(h)])  # (h, T, hs)
    y = y.transpose(1, 0, 2).reshape(T, C)  # re-assemble all head outputs side by side
    return y @ W_O
