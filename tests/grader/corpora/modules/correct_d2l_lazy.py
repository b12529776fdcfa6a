"""Correct: d2l's MultiHeadAttention with nn.LazyLinear (shapes known only after the first forward)."""
# expect: full

import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_o = nn.LazyLinear(num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def transpose_qkv(self, X):
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1).permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])  # (B·h, T, d_k)

    def transpose_output(self, X):
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2]).permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)

    def forward(self, X):
        q, k, v = self.transpose_qkv(self.W_q(X)), self.transpose_qkv(self.W_k(X)), self.transpose_qkv(self.W_v(X))
        T = X.shape[1]
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -1e6)
        out = torch.bmm(self.dropout(nn.functional.softmax(scores, dim=-1)), v)
        return self.W_o(self.transpose_output(out))
