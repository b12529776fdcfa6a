"""Correct: a Hugging Face-style attention, q_proj/k_proj/v_proj/out_proj and an additive mask of finfo.min."""
# expect: full

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.embed_dim = d_model
        self.num_heads = n_heads
        self.head_dim = d_model // n_heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def _shape(self, tensor, seq_len, bsz):
        return tensor.view(bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, hidden_states):
        bsz, tgt_len, _ = hidden_states.size()
        query_states = self._shape(self.q_proj(hidden_states) * self.scaling, tgt_len, bsz)
        key_states = self._shape(self.k_proj(hidden_states), tgt_len, bsz)
        value_states = self._shape(self.v_proj(hidden_states), tgt_len, bsz)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3))
        future = torch.triu(torch.ones(tgt_len, tgt_len, dtype=torch.bool), diagonal=1)
        causal = torch.zeros(tgt_len, tgt_len, dtype=attn_weights.dtype).masked_fill(
            future, torch.finfo(attn_weights.dtype).min)
        attn_weights = nn.functional.softmax(attn_weights + causal, dim=-1)
        attn_weights = nn.functional.dropout(attn_weights, p=self.dropout, training=self.training)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).reshape(bsz, tgt_len, self.embed_dim)
        return self.out_proj(attn_output)
