"""Correct: nn.MultiheadAttention, batch_first=False, a float −inf mask, the (output, weights) tuple returned."""
# expect: full

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.inner = nn.ModuleDict({"mha": nn.MultiheadAttention(d_model, n_heads)})

    def forward(self, x):
        T = x.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf"), dtype=x.dtype), diagonal=1)
        y = x.transpose(0, 1)  # (T, B, C)
        out, weights = self.inner["mha"](y, y, y, attn_mask=mask)
        return out.transpose(0, 1), weights
