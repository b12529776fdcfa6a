"""Bug: softmax over every position first, then the future weights zeroed: rows no longer sum to 1."""
# expect: mistakes=mask-after-softmax

import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0, block_size=64):
        super().__init__()
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.h = n_heads
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        split = lambda t: t.view(B, T, self.h, -1).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(C // self.h), dim=-1)
        att = att * self.tril[:T, :T]  # the bug: masked after the softmax
        return self.proj((att @ v).transpose(1, 2).reshape(B, T, C))
