"""Correct: Peter Bloem's SelfAttention: tokeys, toqueries, tovalues, unifyheads, q and k each scaled by d_k^¼."""
# expect: full

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, emb, heads):
        super().__init__()
        self.heads = heads
        self.tokeys = nn.Linear(emb, emb, bias=False)
        self.toqueries = nn.Linear(emb, emb, bias=False)
        self.tovalues = nn.Linear(emb, emb, bias=False)
        self.unifyheads = nn.Linear(emb, emb)

    def forward(self, x):
        b, t, e = x.size()
        h, s = self.heads, e // self.heads
        keys = self.tokeys(x).view(b, t, h, s).transpose(1, 2).contiguous().view(b * h, t, s)
        queries = self.toqueries(x).view(b, t, h, s).transpose(1, 2).contiguous().view(b * h, t, s)
        values = self.tovalues(x).view(b, t, h, s).transpose(1, 2).contiguous().view(b * h, t, s)
        queries, keys = queries / (s ** (1 / 4)), keys / (s ** (1 / 4))
        dot = torch.bmm(queries, keys.transpose(1, 2))
        indices = torch.triu_indices(t, t, offset=1)
        dot[:, indices[0], indices[1]] = float("-inf")
        out = torch.bmm(F.softmax(dot, dim=2), values).view(b, h, t, s)
        return self.unifyheads(out.transpose(1, 2).contiguous().view(b, t, s * h))
