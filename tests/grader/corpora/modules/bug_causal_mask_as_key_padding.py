"""Bug: the causal mask passed as key_padding_mask to nn.MultiheadAttention instead of attn_mask."""
# expect: mistakes=causal-mask-as-key-padding

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.mha = nn.MultiheadAttention(d_model, n_heads, batch_first=True)

    def forward(self, x):
        T = x.shape[1]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        return self.mha(x, x, x, key_padding_mask=future, need_weights=False)[0]  # the bug: attn_mask=future
