"""Bug: masked_fill(mask == 0, -inf) with an upper-triangular mask: the past hidden, the future seen."""
# expect: mistakes=mask-convention-inverted

import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model) for _ in range(4))
        self.h = n_heads

    def forward(self, x):
        B, T, C = x.shape
        d_k = C // self.h
        q, k, v = (f(x).view(B, T, self.h, d_k).transpose(1, 2) for f in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
        mask = torch.triu(torch.ones(T, T), diagonal=1)
        scores = scores.masked_fill(mask == 0, float("-inf"))  # the bug: tril is what == 0 needs
        return self.out_proj((scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, C))
