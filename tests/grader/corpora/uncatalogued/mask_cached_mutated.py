# Uncatalogued, state-dependent: the mask is cached per size and the attention adds the scores to it in
# place, so a later call of the same size starts from the previous call's scores. Right on the first call
# of each size, wrong on every later one: what it fails depends on which sizes repeat.
import numpy as np

_MASKS = {}


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def causal_mask(n):
    if n not in _MASKS:
        _MASKS[n] = np.triu(np.full((n, n), -np.inf), k=1)
    return _MASKS[n]


def softmax(S):
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        M = causal_mask(S.shape[0])
        M += S  # "saves a copy": the cached mask now holds these scores
        S = M
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(X @ q, X @ k, X @ v, causal) for q, k, v in zip(W_Q, W_K, W_V)]
    return np.concatenate(heads, axis=1) @ W_O
