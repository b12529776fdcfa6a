"""Correct: GPT-NeoX's attention, one query_key_value whose rows are per head [q_i | k_i | v_i], and dense."""
# expect: full

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.num_attention_heads, self.head_size = n_heads, d_model // n_heads
        self.query_key_value = nn.Linear(d_model, 3 * d_model)
        self.dense = nn.Linear(d_model, d_model)

    def forward(self, hidden_states):
        B, T, C = hidden_states.shape
        qkv = self.query_key_value(hidden_states)
        qkv = qkv.view(B, T, self.num_attention_heads, 3 * self.head_size).permute(0, 2, 1, 3)  # (B, h, T, 3·d_k)
        query, key, value = qkv.chunk(3, dim=-1)
        scores = torch.matmul(query, key.transpose(-1, -2)) * self.head_size ** -0.5
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=scores.device))
        scores = scores.masked_fill(~causal, torch.finfo(scores.dtype).min)
        out = torch.matmul(torch.softmax(scores, dim=-1), value)  # (B, h, T, d_k)
        return self.dense(out.permute(0, 2, 1, 3).reshape(B, T, C))
