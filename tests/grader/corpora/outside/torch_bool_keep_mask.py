# Convention: a boolean keep-mask returned by causal_mask (torch.tril(ones, dtype=bool)), as many
# repositories build it for masked_fill; attention itself fills -inf correctly. float64 tensors.
# The course's causal_mask is additive (0 / -inf), so only causal_mask should lose: mask-not-additive.
import math

import torch


def project(X, W):
    return torch.as_tensor(X) @ torch.as_tensor(W)


def scaled_scores(Q, K):
    Q, K = torch.as_tensor(Q), torch.as_tensor(K)
    return Q @ K.T / math.sqrt(Q.shape[1])


def causal_mask(n):
    return torch.tril(torch.ones(n, n, dtype=torch.bool))


def softmax(S):
    return torch.softmax(torch.as_tensor(S), dim=1)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S.masked_fill(~causal_mask(S.shape[0]), float("-inf"))
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ torch.as_tensor(V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return torch.cat([attention_head(project(X, q), project(X, k), project(X, v), causal) for q, k, v in zip(W_Q, W_K, W_V)], 1) @ torch.as_tensor(W_O)
