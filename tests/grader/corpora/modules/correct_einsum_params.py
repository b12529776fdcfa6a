"""Correct: bare (d_model, d_model) parameters used as x @ W, as the course writes X W_Q, with einsum."""
# expect: full

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.W_q = nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model))
        self.W_k = nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model))
        self.W_v = nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model))
        self.W_o = nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model))

    def forward(self, x):
        B, T, C = x.shape
        d_k = C // self.h
        q = (x @ self.W_q).view(B, T, self.h, d_k)  # (B, T, h, d_k)
        k = (x @ self.W_k).view(B, T, self.h, d_k)
        v = (x @ self.W_v).view(B, T, self.h, d_k)
        scores = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(d_k)  # (B, h, T, T)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()
        weights = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
        heads = torch.einsum("bhts,bshd->bthd", weights, v)  # (B, T, h, d_k)
        return heads.reshape(B, T, C) @ self.W_o
