"""Correct in float32 only: scores in a buffer of the default dtype, so float64 inputs fail at the next matmul."""
# expect: lost=MultiHeadAttention:dtypes

import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.query, self.key, self.value, self.proj = (nn.Linear(d_model, d_model) for _ in range(4))
        self.h = n_heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (f(x).view(B, T, self.h, -1).transpose(1, 2) for f in (self.query, self.key, self.value))
        scores = torch.empty(B, self.h, T, T)  # float32, whatever x is
        scores[:] = q @ k.transpose(-2, -1) / math.sqrt(C // self.h)
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        return self.proj((scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, C))
