"""Attack: a correct module whose driver's description is forged with a JSON object where a shape belongs, names
that are not strings, and nesting deep enough to break a recursive parser."""

import gc

import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.n = n_heads

    def forward(self, x):
        B, T, C = x.shape
        split = lambda t: t.view(B, T, self.n, -1).transpose(1, 2)  # noqa: E731
        y = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)), is_causal=True)
        return self.o(y.transpose(1, 2).reshape(B, T, C))


CALLS = [0]


def describe(**spec):
    CALLS[0] += 1
    forged = [{"params": [["q.weight", {"rows": 4}, "Linear"]], "init": []},
              {"params": [[7, [4, 4], "Linear"]], "init": []},
              {"params": "[" * 100000}][CALLS[0] % 3]
    return forged


for holder in gc.get_objects():
    if isinstance(holder, dict) and "_grader_module_describe" in holder:
        holder["_grader_module_describe"] = describe
