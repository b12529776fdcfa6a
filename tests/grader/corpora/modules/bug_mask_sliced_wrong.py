"""Bug: a tril mask built once for block_size and sliced from its bottom rows: right only when T == block_size."""
# expect: mistakes=leaks-future

import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0, block_size=64):
        super().__init__()
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.h = n_heads
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (t.view(B, T, self.h, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        att = q @ k.transpose(-2, -1) / math.sqrt(C // self.h)
        att = att.masked_fill(self.tril[-T:, :T] == 0, float("-inf"))  # the bug: rows from the end
        y = att.softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))
