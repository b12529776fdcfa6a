"""Attack: the course's projections and heads, but each head mixes its values with a fixed causal average
(its own decay) instead of softmax(QKᵀ/√d_k): a linear map of the input that looks like a module."""

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0, block_size=128):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model) for _ in range(4))
        self.h = n_heads

    def forward(self, x):
        B, T, C = x.shape
        v = self.v_proj(x).view(B, T, self.h, C // self.h).transpose(1, 2)  # (B, h, T, d_k)
        t = torch.arange(T, dtype=x.dtype, device=x.device)
        decay = torch.linspace(0.5, 0.95, self.h, dtype=x.dtype, device=x.device).view(self.h, 1, 1)
        weights = decay ** (t.view(T, 1) - t.view(1, T)).clamp(min=0) * (t.view(T, 1) >= t.view(1, T))  # (h, T, T)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        y = (weights @ v).transpose(1, 2).reshape(B, T, C)  # (B, T, C)
        return self.out_proj(y)  # q_proj and k_proj never used: nothing looks at the content
