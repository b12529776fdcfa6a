# Convention: Karpathy's GPT lecture Head — wei = q @ k.T * C**-0.5 with C the embedding size
# (n_embd = d_model), not the head size: a wrong scale only multi-head attention can show.
import numpy as np


def project(X, W):
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def causal_mask(n):
    tril = np.tril(np.ones((n, n)))
    return np.where(tril == 0, float('-inf'), 0.0)


def softmax(S):
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S + causal_mask(S.shape[0])
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    B, C = X.shape
    outs = []
    for q_w, k_w, v_w in zip(W_Q, W_K, W_V):
        q, k, v = X @ q_w, X @ k_w, X @ v_w
        wei = q @ k.T * C**-0.5
        if causal:
            wei = wei + causal_mask(B)
        outs.append(softmax(wei) @ v)
    return np.concatenate(outs, axis=-1) @ W_O
