"""Correct: the Annotated Transformer's MultiHeadedAttention, four clones of one Linear and attention()."""
# expect: full

import copy
import math

import torch
import torch.nn as nn


def clones(module, N):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


def subsequent_mask(size):
    return torch.triu(torch.ones(1, size, size), diagonal=1).type(torch.uint8) == 0


def attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        self.d_k = d_model // n_heads
        self.h = n_heads
        self.linears = clones(nn.Linear(d_model, d_model), 4)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        nbatches, T = x.size(0), x.size(1)
        mask = subsequent_mask(T).unsqueeze(1)
        query, key, value = [lin(t).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                             for lin, t in zip(self.linears, (x, x, x), strict=False)]
        y, _ = attention(query, key, value, mask=mask, dropout=self.dropout)
        y = y.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.linears[-1](y)
