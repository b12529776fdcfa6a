"""Correct: x-transformers' shape: to_q, a fused to_kv (2·d_model, [k | v]) and to_out = Sequential(Linear, Dropout)."""
# expect: full

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.heads, self.scale = n_heads, (d_model // n_heads) ** -0.5
        self.to_q = nn.Linear(d_model, d_model, bias=False)
        self.to_kv = nn.Linear(d_model, 2 * d_model, bias=False)
        self.to_out = nn.Sequential(nn.Linear(d_model, d_model), nn.Dropout(dropout))

    def forward(self, x):
        B, T, C = x.shape
        q = self.to_q(x)
        k, v = self.to_kv(x).chunk(2, dim=-1)
        q, k, v = (t.reshape(B, T, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        dots = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        attn = dots.masked_fill(mask, -torch.finfo(dots.dtype).max).softmax(dim=-1)
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        return self.to_out(out.transpose(1, 2).reshape(B, T, C))
