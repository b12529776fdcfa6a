"""Bug: nn.MultiheadAttention given tril(...).bool() as attn_mask, meaning "allowed"; there True means NOT allowed."""
# expect: mistakes=mask-convention-inverted

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.mha = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)

    def forward(self, x):
        T = x.size(1)
        mask = torch.tril(torch.ones(T, T)).bool()  # True on and below the diagonal
        return self.mha(x, x, x, attn_mask=mask)[0]
