"""A correct submission written with torch (float64 tensors in, tensors out)."""

import math

import torch


def project(X, W):
    return torch.as_tensor(X) @ torch.as_tensor(W)


def scaled_scores(Q, K):
    Q, K = torch.as_tensor(Q), torch.as_tensor(K)
    return Q @ K.T / math.sqrt(Q.shape[1])


def causal_mask(n):
    return torch.triu(torch.full((n, n), float("-inf"), dtype=torch.float64), diagonal=1)


def softmax(S):
    return torch.softmax(torch.as_tensor(S), dim=1)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S + causal_mask(S.shape[0])
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ torch.as_tensor(V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(project(X, q), project(X, k), project(X, v), causal) for q, k, v in zip(W_Q, W_K, W_V)]
    return torch.cat(heads, dim=1) @ torch.as_tensor(W_O)
