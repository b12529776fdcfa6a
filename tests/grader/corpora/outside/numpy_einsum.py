# Convention: einsum for every product (as in many CS231n solutions), -inf mask from np.triu, float64.
import numpy as np


def project(X, W):
    return np.einsum("ij,jk->ik", X, W)


def scaled_scores(Q, K):
    return np.einsum("id,jd->ij", Q, K) / np.sqrt(Q.shape[1])


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), 1)


def softmax(S):
    m = np.max(S, axis=1, keepdims=True)
    e = np.exp(S - m)
    return e / np.einsum("ij->i", e)[:, None]


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    return softmax(S + causal_mask(len(S))) if causal else softmax(S)


def attention_head(Q, K, V, causal=True):
    return np.einsum("ij,jd->id", attention_weights(Q, K, causal), V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    Wq, Wk, Wv = np.stack(W_Q), np.stack(W_K), np.stack(W_V)  # (h, d_model, d_k)
    Q, K, V = (np.einsum("nd,hdk->hnk", X, W) for W in (Wq, Wk, Wv))  # (h, n, d_k)
    heads = np.stack([attention_head(q, k, v, causal) for q, k, v in zip(Q, K, V)])  # (h, n, d_k)
    concat = np.einsum("hnk->nhk", heads).reshape(X.shape[0], -1)  # (n, h·d_k)
    return concat @ W_O
