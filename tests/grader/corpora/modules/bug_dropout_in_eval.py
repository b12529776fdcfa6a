"""Bug: F.dropout on the attention weights with training=True: still random in eval mode."""
# expect: mistakes=dropout-in-eval

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1, block_size=128):
        super().__init__()
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.n_head, self.p = n_heads, dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in self.c_attn(x).split(C, dim=2))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf")).softmax(dim=-1)
        att = F.dropout(att, p=self.p, training=True)  # the bug: not self.training
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))
