"""Correct: modded-nanogpt's shape: c_q, c_k, c_v and c_proj, no biases, SDPA with is_causal."""
# expect: full

import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_head, self.head_dim = n_heads, d_model // n_heads
        self.c_q = nn.Linear(d_model, d_model, bias=False)
        self.c_k = nn.Linear(d_model, d_model, bias=False)
        self.c_v = nn.Linear(d_model, d_model, bias=False)
        self.c_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = (f(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2) for f in (self.c_q, self.c_k, self.c_v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view_as(x))
