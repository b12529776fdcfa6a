"""Correct: fairseq's MultiheadAttention shape: k_proj, v_proj, q_proj created in that order, q scaled, bmm on (B·h)."""
# expect: full

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0, bias=True):
        super().__init__()
        self.num_heads, self.head_dim = n_heads, d_model // n_heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = dropout

    def forward(self, query):
        x = query.transpose(0, 1)  # fairseq is time-first: (T, B, C)
        tgt_len, bsz, embed_dim = x.size()
        q = self.q_proj(x) * self.scaling
        k, v = self.k_proj(x), self.v_proj(x)
        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)  # (B·h, T, d_k)
        k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        attn_weights = torch.bmm(q, k.transpose(1, 2))
        future = torch.triu(torch.full((tgt_len, tgt_len), float("-inf"), dtype=q.dtype), 1)
        attn_probs = F.dropout(F.softmax(attn_weights + future, dim=-1), p=self.dropout, training=self.training)
        attn = torch.bmm(attn_probs, v).transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        return self.out_proj(attn).transpose(0, 1)
