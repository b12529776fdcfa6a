"""The module's forward in float64 numpy, batched, from replaceable pieces: the reference, and each
mistake students make in a module, for naming mistakes from evidence (as ``grader.mistakes`` does for the
seven functions).

The pieces follow a module's code: project with all heads side by side, split into heads (``view`` then
``transpose``), scores over √d_k, mask, softmax, weights times V, merge the heads back, project out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from grader.module.layouts import CourseWeights
from mha import reference


@dataclass(frozen=True)
class ModuleVariant:
    split_by_view: bool = False  # (B, T, C) viewed as (B, h, T, d_k), no transpose
    merge_by_view: bool = False  # (B, h, T, d_k) viewed back as (B, T, C), no transpose
    scale: bool = True
    mask: str = "causal"  # causal | none | inverted (allowed only after the diagonal) | after-softmax

    def forward(self, x: np.ndarray, W: CourseWeights) -> np.ndarray:
        B, T, C = x.shape
        h = len(W.q)
        d_k = C // h

        def split(P):  # (B, T, C) -> (B, h, T, d_k)
            if self.split_by_view:
                return P.reshape(B, h, T, d_k)
            return P.reshape(B, T, h, d_k).transpose(0, 2, 1, 3)

        # 1) project, 2) split into heads
        Q, K, V = (split(x @ m) for m in (W.q_cat, W.k_cat, W.v_cat))  # (B, h, T, d_k)
        # 3) scores
        S = Q @ K.transpose(0, 1, 3, 2) / (math.sqrt(d_k) if self.scale else 1.0)  # (B, h, T, T)
        future = np.triu(np.ones((T, T), dtype=bool), k=1)
        with np.errstate(all="ignore"):
            # 4) mask and softmax (a row with nothing allowed gives NaN, as torch does)
            if self.mask in ("causal", "after-softmax"):
                blocked = future if self.mask == "causal" else np.zeros_like(future)
            elif self.mask == "inverted":
                blocked = ~future
            else:
                blocked = np.zeros_like(future)
            S = np.where(blocked, -np.inf, S)
            top = S.max(axis=-1, keepdims=True)
            e = np.exp(S - top)
            A = e / e.sum(axis=-1, keepdims=True)  # (B, h, T, T)
            if self.mask == "after-softmax":
                A = A * ~future
            # 5) weights times V, 6) merge the heads, 7) project out
            heads = A @ V  # (B, h, T, d_k)
        merged = heads.reshape(B, T, C) if self.merge_by_view else heads.transpose(0, 2, 1, 3).reshape(B, T, C)
        with np.errstate(all="ignore"):
            return merged @ W.o  # (B, T, C)


REF = ModuleVariant()

# Each identifier with the ways of making it; the order is the course's order of steps.
VARIANTS: tuple[tuple[str, ModuleVariant], ...] = (
    ("heads-mixed-by-view", replace(REF, split_by_view=True)),
    ("heads-mixed-by-view", replace(REF, split_by_view=True, merge_by_view=True)),
    ("missing-scale", replace(REF, scale=False)),
    ("leaks-future", replace(REF, mask="none")),
    ("mask-convention-inverted", replace(REF, mask="inverted")),
    ("mask-after-softmax", replace(REF, mask="after-softmax")),
    ("concat-wrong-axis", replace(REF, merge_by_view=True)),
)


def expected(x: np.ndarray, W: CourseWeights) -> np.ndarray:
    """The course's answer, one sequence at a time through ``mha.reference``: (B, T, C)."""
    return np.stack([reference.multi_head_attention(seq, W.q, W.k, W.v, W.o, causal=True) for seq in x])
