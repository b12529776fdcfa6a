"""Low-rank projections (x @ A @ B, rank 2): no placement of the course's weights exists; weight-free checks pass."""
# expect: lost=MultiHeadAttention:worked,MultiHeadAttention:hidden

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.down = nn.Parameter(torch.randn(4, d_model, 2) / d_model**0.5)  # Q, K, V, O: d_model -> 2
        self.up = nn.Parameter(torch.randn(4, 2, d_model) / 2**0.5)  # 2 -> d_model
        self.n = n_heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = ((x @ self.down[i] @ self.up[i]).view(B, T, self.n, -1).transpose(1, 2) for i in range(3))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, T, d_k)
        return y.transpose(1, 2).reshape(B, T, C) @ self.down[3] @ self.up[3]
