# Convention: nanoGPT's CausalSelfAttention — a fused c_attn weight, .split(n_embd), view(T, h, hs)
# .transpose, a registered tril "bias" buffer, att.masked_fill(bias == 0, -inf); float64 tensors.
import math

import torch
import torch.nn.functional as F


def project(X, W):
    return torch.as_tensor(X) @ torch.as_tensor(W)


def scaled_scores(Q, K):
    q, k = torch.as_tensor(Q), torch.as_tensor(K)
    return (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))


def causal_mask(n):
    bias = torch.tril(torch.ones(n, n, dtype=torch.float64))
    return torch.zeros(n, n, dtype=torch.float64).masked_fill(bias == 0, float("-inf"))


def softmax(S):
    return F.softmax(torch.as_tensor(S), dim=-1)


def attention_weights(Q, K, causal=True):
    att = scaled_scores(Q, K)
    if causal:
        bias = torch.tril(torch.ones_like(att))
        att = att.masked_fill(bias == 0, float("-inf"))
    return F.softmax(att, dim=-1)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ torch.as_tensor(V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    x = torch.as_tensor(X)
    T, C = x.size()
    n_head = len(W_Q)
    c_attn = torch.cat([torch.as_tensor(w) for w in (*W_Q, *W_K, *W_V)], dim=1)  # (C, 3C)
    q, k, v = (x @ c_attn).split(C, dim=1)
    q = q.view(T, n_head, C // n_head).transpose(0, 1)  # (nh, T, hs)
    k = k.view(T, n_head, C // n_head).transpose(0, 1)
    v = v.view(T, n_head, C // n_head).transpose(0, 1)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if causal:
        att = att.masked_fill(torch.tril(torch.ones(T, T, dtype=torch.bool)) == 0, float("-inf"))
    y = F.softmax(att, dim=-1) @ v  # (nh, T, hs)
    y = y.transpose(0, 1).contiguous().view(T, C)
    return y @ torch.as_tensor(W_O)
