"""Bug: scaled_dot_product_attention without is_causal=True: every position sees the whole sequence."""
# expect: mistakes=leaks-future

import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0, block_size=128):
        super().__init__()
        self.c_attn = nn.Linear(d_model, 3 * d_model, bias=False)
        self.c_proj = nn.Linear(d_model, d_model, bias=False)
        self.n_head = n_heads

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in self.c_attn(x).split(C, dim=2))
        y = F.scaled_dot_product_attention(q, k, v)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
