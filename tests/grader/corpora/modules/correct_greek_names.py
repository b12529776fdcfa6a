"""Correct: projections named alpha/beta/gamma/delta, found by what they compute (Q, K, V, output in creation order)."""
# expect: full

import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.alpha = nn.Linear(d_model, d_model)
        self.beta = nn.Linear(d_model, d_model)
        self.gamma = nn.Linear(d_model, d_model)
        self.delta = nn.Linear(d_model, d_model)
        self.n = n_heads

    def forward(self, x):
        B, T, C = x.shape
        split = lambda t: t.view(B, T, self.n, -1).transpose(1, 2)  # noqa: E731
        y = F.scaled_dot_product_attention(split(self.alpha(x)), split(self.beta(x)), split(self.gamma(x)),
                                           is_causal=True)
        return self.delta(y.transpose(1, 2).reshape(B, T, C))
