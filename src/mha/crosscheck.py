"""Masked multi-head attention computed by PyTorch's own kernels, to cross-check the reference.

Both functions take the course's per-head matrices (lists of (d_model, d_k)
matrices and W_O of shape (h·d_k, d_model)) and return float64 numpy arrays.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F


def _t(matrix) -> torch.Tensor:
    return torch.as_tensor(np.asarray(matrix, dtype=np.float64))


def torch_multihead_attention(X, W_Q: Sequence, W_K: Sequence, W_V: Sequence, W_O) -> tuple[np.ndarray, np.ndarray]:
    """``nn.MultiheadAttention`` with the course's weights and a causal mask.

    Returns (output (n, d_model), per-head weights (h, n, n)).
    """
    X = _t(X)  # (n, d_model)
    n, d_model = X.shape
    h = len(W_Q)
    if h * np.shape(W_Q[0])[1] != d_model:
        raise ValueError(f"nn.MultiheadAttention needs h·d_k == d_model, "
                         f"got h={h}, d_k={np.shape(W_Q[0])[1]}, d_model={d_model}")
    mha = torch.nn.MultiheadAttention(embed_dim=d_model, num_heads=h, bias=False, batch_first=True).double()
    with torch.no_grad():
        # PyTorch computes q = x @ W_q.T and gives head i the columns i·d_k … (i+1)·d_k of q,
        # so the course's per-head matrices, side by side and transposed, are W_q.
        # 3 × (d_model, d_model)
        in_proj = [torch.cat([_t(w) for w in weights], dim=1).T for weights in (W_Q, W_K, W_V)]
        mha.in_proj_weight.copy_(torch.cat(in_proj, dim=0))  # (3·d_model, d_model)
        mha.out_proj.weight.copy_(_t(W_O).T)  # PyTorch computes concat @ weight.T
        mask = torch.triu(torch.full((n, n), float("-inf"), dtype=torch.float64), diagonal=1)  # (n, n)
        out, weights = mha(X[None], X[None], X[None], attn_mask=mask, need_weights=True, average_attn_weights=False)
    return out[0].numpy(), weights[0].numpy()  # (n, d_model), (h, n, n)


def sdpa_multihead_attention(X, W_Q: Sequence, W_K: Sequence, W_V: Sequence, W_O) -> np.ndarray:
    """``F.scaled_dot_product_attention(is_causal=True)`` per head, then concat and W_O."""
    X = _t(X)  # (n, d_model)
    heads = []
    for Wq, Wk, Wv in zip(W_Q, W_K, W_V, strict=True):
        q, k, v = X @ _t(Wq), X @ _t(Wk), X @ _t(Wv)  # (n, d_k) each
        heads.append(F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True)[0])  # (n, d_k)
    return (torch.cat(heads, dim=1) @ _t(W_O)).numpy()  # (n, d_model)
