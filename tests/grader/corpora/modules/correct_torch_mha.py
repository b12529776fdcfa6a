"""Correct: a wrapped nn.MultiheadAttention, its boolean mask True where a position is NOT allowed."""
# expect: full

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)

    def forward(self, x):
        T = x.shape[1]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        out, _ = self.attn(x, x, x, attn_mask=future, need_weights=False)
        return out
