"""Bug: heads split with view(B, h, T, d_k) and merged back with view(B, T, C), both without transpose."""
# expect: mistakes=heads-mixed-by-view

import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0, block_size=64):
        super().__init__()
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.h = n_heads

    def forward(self, x):
        B, T, C = x.shape
        q = self.q_proj(x).view(B, self.h, T, -1)
        k = self.k_proj(x).view(B, self.h, T, -1)
        v = self.v_proj(x).view(B, self.h, T, -1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(y.view(B, T, C))
