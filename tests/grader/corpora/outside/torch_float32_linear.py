# Convention: minGPT — tensors in torch's default float32 (as nn.Linear computes), torch.tril keep-mask
# with masked_fill(... == 0, float('-inf')), F.softmax(dim=-1).
import math

import torch
import torch.nn.functional as F


def t(a):
    return torch.as_tensor(a).float()  # float32, torch's default dtype


def project(X, W):
    return t(X) @ t(W)


def scaled_scores(Q, K):
    Q, K = t(Q), t(K)
    return (Q @ K.transpose(-2, -1)) * (1.0 / math.sqrt(K.size(-1)))


def causal_mask(n):
    keep = torch.tril(torch.ones(n, n))
    return torch.zeros(n, n).masked_fill(keep == 0, float("-inf"))


def softmax(S):
    return F.softmax(t(S), dim=-1)


def attention_weights(Q, K, causal=True):
    att = scaled_scores(Q, K)
    if causal:
        T = att.size(-1)
        att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))
    return F.softmax(att, dim=-1)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ t(V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    x = t(X)
    y = torch.cat([attention_head(x @ t(q), x @ t(k), x @ t(v), causal) for q, k, v in zip(W_Q, W_K, W_V)], dim=-1)
    return y @ t(W_O)
