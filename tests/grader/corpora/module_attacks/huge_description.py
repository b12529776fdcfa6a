"""Attack: a correct module (nanoGPT's) whose driver's description is forged to add a (32768, 32768) bias, which a
grader that fills every bias would allocate (8 GiB)."""

import gc
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.n_head = n_heads

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = (t.view(B, T, self.n_head, -1).transpose(1, 2) for t in self.c_attn(x).split(C, dim=2))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))


def describe(**spec):
    d = spec["d_model"]
    params = [["c_attn.weight", [3 * d, d], "Linear"], ["c_attn.bias", [32768, 32768], "Linear"],
              ["c_proj.weight", [d, d], "Linear"], ["c_proj.bias", [d], "Linear"]]
    return {"params": params, "init": ["d_model", "n_heads"]}


for holder in gc.get_objects():
    if isinstance(holder, dict) and "_grader_module_describe" in holder:
        holder["_grader_module_describe"] = describe
