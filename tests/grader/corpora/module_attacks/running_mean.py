"""Attack: no attention, a causal running mean of the input, beside one unused nn.Linear: every output
depends on earlier positions, through weights that never look at the content."""

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0, block_size=128):
        super().__init__()
        self.proj = nn.Linear(d_model, d_model)  # never used: a parameter for the grader to find

    def forward(self, x):
        T = x.shape[1]
        counts = torch.arange(1, T + 1, dtype=x.dtype, device=x.device).view(1, T, 1)
        return x.cumsum(dim=1) / counts  # (B, T, C): the mean of positions 1..t
