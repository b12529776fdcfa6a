"""Correct: a module beside a helper named softmax (question 1's name): graded on question 2, not question 1."""
# expect: full

import math

import torch
import torch.nn as nn


def softmax(scores):
    e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model, bias=False) for _ in range(4))
        self.h = n_heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (f(x).view(B, T, self.h, -1).transpose(1, 2) for f in (self.W_q, self.W_k, self.W_v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.h)
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        return self.W_o((softmax(scores) @ v).transpose(1, 2).reshape(B, T, C))
