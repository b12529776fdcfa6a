"""Correct: GPT-2 as Hugging Face writes it, Conv1D layers whose weight is (in, out), c_attn split [q | k | v]."""
# expect: full

import math

import torch
import torch.nn as nn


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))  # (in, out)
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size=128):
        super().__init__()
        self.c_attn = Conv1D(3 * d_model, d_model)
        self.c_proj = Conv1D(d_model, d_model)
        self.num_heads, self.split_size = n_heads, d_model
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def _split_heads(self, t):
        new_shape = t.size()[:-1] + (self.num_heads, t.size(-1) // self.num_heads)
        return t.view(new_shape).permute(0, 2, 1, 3)  # (B, h, T, d_k)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query, key, value = self._split_heads(query), self._split_heads(key), self._split_heads(value)
        w = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(value.size(-1))
        T = query.size(-2)
        causal = self.bias[:T, :T]
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        a = torch.matmul(nn.functional.softmax(w, dim=-1), value)
        a = a.permute(0, 2, 1, 3).contiguous()
        return self.c_proj(a.view(a.size()[:-2] + (self.num_heads * a.size(-1),)))
