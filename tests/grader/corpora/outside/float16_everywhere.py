# Mistake outside the catalog: everything computed in float16 (half precision), far too coarse for
# the tolerance; the feedback should say the precision is the cause.
import numpy as np

h = np.float16


def project(X, W):
    return X.astype(h) @ W.astype(h)


def scaled_scores(Q, K):
    Q, K = Q.astype(h), K.astype(h)
    return Q @ K.T / h(np.sqrt(Q.shape[1]))


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)


def softmax(S):
    S = np.asarray(S).astype(h)
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S + causal_mask(S.shape[0])
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V.astype(h)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(project(X, q), project(X, k), project(X, v), causal) for q, k, v in zip(W_Q, W_K, W_V)]
    return np.concatenate(heads, axis=1) @ W_O.astype(h)
