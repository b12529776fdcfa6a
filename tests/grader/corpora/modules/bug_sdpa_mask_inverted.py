"""Bug: scaled_dot_product_attention given triu(1).bool() as if True meant "masked"; there True means allowed."""
# expect: mistakes=mask-convention-inverted

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.n_heads = n_heads

    def forward(self, x):
        B, T, C = x.shape
        split = lambda t: t.view(B, T, self.n_heads, -1).transpose(1, 2)  # noqa: E731
        future = torch.triu(torch.ones(T, T), diagonal=1).bool()
        y = F.scaled_dot_product_attention(split(self.query(x)), split(self.key(x)), split(self.value(x)),
                                           attn_mask=future)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))
