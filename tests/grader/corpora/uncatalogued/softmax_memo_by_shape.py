# Uncatalogued, state- and shape-dependent: the softmax remembers its result per shape ("the same size
# gives the same weights"), so a second matrix of a shape already seen gets the first one's weights.
import numpy as np

_SEEN = {}


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)


def softmax(S):
    if S.shape not in _SEEN:
        e = np.exp(S - S.max(axis=1, keepdims=True))
        _SEEN[S.shape] = e / e.sum(axis=1, keepdims=True)
    return _SEEN[S.shape]


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S + causal_mask(S.shape[0])
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(X @ q, X @ k, X @ v, causal) for q, k, v in zip(W_Q, W_K, W_V)]
    return np.concatenate(heads, axis=1) @ W_O
