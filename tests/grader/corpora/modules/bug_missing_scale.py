"""Bug: scores q·k without the 1/√d_k."""
# expect: mistakes=missing-scale

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.h = n_heads

    def forward(self, x):
        B, T, C = x.shape
        split = lambda t: t.reshape(B, T, self.h, -1).permute(0, 2, 1, 3)  # noqa: E731
        q, k, v = split(self.W_q(x)), split(self.W_k(x)), split(self.W_v(x))
        scores = q @ k.transpose(-1, -2)  # the bug: no / sqrt(d_k)
        scores = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        y = scores.softmax(-1) @ v
        return self.W_o(y.permute(0, 2, 1, 3).reshape(B, T, C))
