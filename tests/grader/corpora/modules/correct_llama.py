"""Correct: LLaMA's Attention without rotary embeddings: wq, wk, wv, wo without bias, SDPA with is_causal."""
# expect: full

import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.wq = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, d_model, bias=False)

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq, xk, xv = (t.view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2) for t in (xq, xk, xv))
        output = F.scaled_dot_product_attention(xq, xk, xv, is_causal=True)
        return self.wo(output.transpose(1, 2).contiguous().view(bsz, seqlen, -1))
