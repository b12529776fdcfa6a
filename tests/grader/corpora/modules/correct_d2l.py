"""Correct: d2l's MultiHeadAttention, W_q/W_k/W_v/W_o without bias and transpose_qkv helpers."""
# expect: full

import math

import torch
from torch import nn


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)  # (B, T, h, d_k)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])  # (B·h, T, d_k)


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


def masked_softmax(X):
    T = X.shape[-1]
    keep = torch.arange(T)[None, :] <= torch.arange(T)[:, None]
    return nn.functional.softmax(X.masked_fill(~keep, -1e6), dim=-1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0, bias=False):
        super().__init__()
        self.num_heads = n_heads
        self.dropout = nn.Dropout(dropout)
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x):
        q = transpose_qkv(self.W_q(x), self.num_heads)
        k = transpose_qkv(self.W_k(x), self.num_heads)
        v = transpose_qkv(self.W_v(x), self.num_heads)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
        out = torch.bmm(self.dropout(masked_softmax(scores)), v)
        return self.W_o(transpose_output(out, self.num_heads))
