"""Bug: (B, T, C) viewed as (B, h, T, d_k) without transpose; the heads get pieces of several positions."""
# expect: mistakes=heads-mixed-by-view

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.n_heads = n_heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.reshape(B, self.n_heads, T, C // self.n_heads)  # the bug: (B, h, T, d_k) straight, no transpose
        k = k.reshape(B, self.n_heads, T, C // self.n_heads)
        v = v.reshape(B, self.n_heads, T, C // self.n_heads)
        att = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        att = att.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
