"""Correct: query/key/value/proj Linears and scaled_dot_product_attention with a boolean mask, True = allowed."""
# expect: full

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0, block_size=256):
        super().__init__()
        self.query = nn.Linear(d_model, d_model, bias=False)
        self.key = nn.Linear(d_model, d_model, bias=False)
        self.value = nn.Linear(d_model, d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model)
        self.n_heads = n_heads
        self.p = dropout
        self.register_buffer("allowed", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        split = lambda t: t.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.allowed[:T, :T],
                                           dropout_p=self.p if self.training else 0.0)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))
