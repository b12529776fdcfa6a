# Convention: "tril then renormalise" — exponentiate (shifted by each row's largest visible score),
# multiply by the lower-triangular keep matrix, divide by the row sum. numpy, float64.
import numpy as np


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(K.shape[1])


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)


def softmax(S):
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if not causal:
        return softmax(S)
    tril = np.tril(np.ones_like(S))
    top = np.where(tril == 1, S, -np.inf).max(axis=1, keepdims=True)
    with np.errstate(over="ignore"):
        e = np.where(tril == 1, np.exp(S - top), 0.0)  # future entries dropped, whatever exp gave there
    return e / e.sum(axis=1, keepdims=True)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return np.concatenate([attention_head(X @ a, X @ b, X @ c, causal) for a, b, c in zip(W_Q, W_K, W_V)], axis=1) @ W_O
