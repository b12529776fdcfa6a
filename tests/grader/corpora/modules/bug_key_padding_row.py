"""Bug: nn.MultiheadAttention given the causal mask only as key_padding_mask, cut to the (B, T) torch asks for."""
# expect: mistakes=causal-mask-as-key-padding

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.mha = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)

    def forward(self, x):
        B, T, C = x.shape
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)  # True: not allowed
        padding = future[-1].expand(B, T)  # the bug: attn_mask=future; key_padding_mask is per key, not per query
        out, _ = self.mha(x, x, x, key_padding_mask=padding, need_weights=False)
        return out
