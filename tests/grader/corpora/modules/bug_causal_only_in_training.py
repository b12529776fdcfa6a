"""Bug: scaled_dot_product_attention(..., is_causal=self.training): no mask in eval mode."""
# expect: mistakes=mask-only-in-training


import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model) for _ in range(4))
        self.h = n_heads

    def forward(self, x):
        B, T, C = x.shape
        d_k = C // self.h
        q, k, v = (f(x).view(B, T, self.h, d_k).transpose(1, 2) for f in (self.q_proj, self.k_proj, self.v_proj))
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.training)  # the bug
        return self.out_proj(y.transpose(1, 2).reshape(B, T, C))
