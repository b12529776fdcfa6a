"""Correct: attention dropout under another argument's name (attn_pdrop, as GPT-2's config), applied with F.dropout."""
# expect: full

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, attn_pdrop=0.1):
        super().__init__()
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.n_head, self.attn_pdrop = n_heads, attn_pdrop

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in self.c_attn(x).split(C, dim=2))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(dim=-1)
        att = F.dropout(att, p=self.attn_pdrop, training=self.training)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))
