"""Bug: the lecture's heads concatenated in reverse order (torch.cat(heads[::-1]))."""
# expect: mistakes=heads-concat-order

import torch
import torch.nn as nn
from torch.nn import functional as F


class Head(nn.Module):
    def __init__(self, d_model, head_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        k, q = self.key(x), self.query(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = wei.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        return F.softmax(wei, dim=-1) @ self.value(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        out = [h(x) for h in self.heads]
        return self.proj(torch.cat(out[::-1], dim=-1))  # the bug: reversed
