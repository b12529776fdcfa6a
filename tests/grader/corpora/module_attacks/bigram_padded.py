"""Attack: a bigram table as build_model, padded with an unused parameter to a count the course's model may have,
beside an attention that is a per-position map."""

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.proj(x)


class Bigram(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.table = nn.Embedding(vocab_size, vocab_size)
        self.pad = nn.Parameter(torch.zeros(402048 - vocab_size * vocab_size))  # never used
        self.attn = MultiHeadAttention(128, 2)

    def forward(self, idx):
        return self.table(idx)


def build_model(vocab_size, block_size):
    return Bigram(vocab_size)
