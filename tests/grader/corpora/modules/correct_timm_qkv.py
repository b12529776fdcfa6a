"""Correct: timm's Attention (qkv Linear reshaped (B, N, 3, h, d).permute(2, 0, 3, 1, 4), q scaled first), causal."""
# expect: full

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, qkv_bias=False):
        super().__init__()
        self.num_heads = n_heads
        self.scale = (d_model // n_heads) ** -0.5
        self.qkv = nn.Linear(d_model, d_model * 3, bias=qkv_bias)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        attn = attn.masked_fill(torch.triu(torch.ones(N, N, dtype=torch.bool), 1), float("-inf")).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))
