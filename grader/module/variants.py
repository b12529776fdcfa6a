"""The module's forward in float64 numpy, batched, from replaceable pieces: the reference, and each
mistake students make in a module, for naming mistakes from evidence (as ``grader.functions.mistakes`` does for the
seven functions).

The pieces follow a module's code: project with all heads side by side, split into heads (``view`` then
``transpose``), scores over √d_k, mask, softmax over the keys, weights times V, merge the heads back in
order, project out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from grader.module.layouts import CourseWeights
from mha import reference


@dataclass(frozen=True)
class ModuleVariant:
    split_by_view: bool = False  # (B, T, C) viewed as (B, h, T, d_k), no transpose
    merge_by_view: bool = False  # (B, h, T, d_k) viewed back as (B, T, C), no transpose
    scale: str = "sqrt_dk"  # sqrt_dk | none | sqrt_dmodel | dmodel | dk
    # causal | none | inverted (allowed only after the diagonal) | inverted-diagonal (the diagonal and after: triu
    # with its diagonal, compared == 0) | after-softmax | strict
    mask: str = "causal"
    softmax_dim: int = -1  # -2: over the queries
    merge: str = "in-order"  # in-order | reversed (head h first) | interleaved (columns as (d_k, h))
    project_out: bool = True

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
        divide = {"sqrt_dk": math.sqrt(d_k), "none": 1.0, "sqrt_dmodel": math.sqrt(C), "dmodel": C, "dk": d_k}
        S = Q @ K.transpose(0, 1, 3, 2) / divide[self.scale]  # (B, h, T, T)
        future = np.triu(np.ones((T, T), dtype=bool), k=1)
        with np.errstate(all="ignore"):
            # 4) mask and softmax (a row with nothing allowed gives NaN, as torch does)
            blocked = {"causal": future, "inverted": ~future, "strict": np.triu(np.ones((T, T), dtype=bool)),
                       "inverted-diagonal": np.tril(np.ones((T, T), dtype=bool), k=-1),
                       }.get(self.mask, np.zeros_like(future))
            S = np.where(blocked, -np.inf, S)
            top = S.max(axis=self.softmax_dim, keepdims=True)
            e = np.exp(S - top)
            A = e / e.sum(axis=self.softmax_dim, keepdims=True)  # (B, h, T, T)
            if self.mask == "after-softmax":
                A = A * ~future
            # 5) weights times V, 6) merge the heads, 7) project out
            heads = A @ V  # (B, h, T, d_k)
        if self.merge == "reversed":
            heads = heads[:, ::-1]
        if self.merge_by_view:
            merged = heads.reshape(B, T, C)
        elif self.merge == "interleaved":
            merged = heads.transpose(0, 2, 3, 1).reshape(B, T, C)  # columns as (d_k, h)
        else:
            merged = heads.transpose(0, 2, 1, 3).reshape(B, T, C)
        if not self.project_out:
            return merged
        with np.errstate(all="ignore"):
            return merged @ W.o  # (B, T, C)


REF = ModuleVariant()

# Each identifier with the ways of making it; the order is the course's order of steps.
VARIANTS: tuple[tuple[str, ModuleVariant], ...] = (
    ("heads-mixed-by-view", replace(REF, split_by_view=True)),
    ("heads-mixed-by-view", replace(REF, split_by_view=True, merge_by_view=True)),
    ("heads-mixed-by-view", replace(REF, merge_by_view=True)),
    ("missing-scale", replace(REF, scale="none")),
    ("wrong-scale", replace(REF, scale="sqrt_dmodel")),
    ("wrong-scale", replace(REF, scale="dmodel")),
    ("wrong-scale", replace(REF, scale="dk")),
    ("leaks-future", replace(REF, mask="none")),
    ("mask-convention-inverted", replace(REF, mask="inverted")),
    ("mask-convention-inverted", replace(REF, mask="inverted-diagonal")),
    ("mask-hides-diagonal", replace(REF, mask="strict")),
    ("mask-after-softmax", replace(REF, mask="after-softmax")),
    ("softmax-wrong-dim", replace(REF, softmax_dim=-2)),
    ("heads-concat-order", replace(REF, merge="reversed")),
    ("heads-concat-order", replace(REF, merge="interleaved")),
    ("missing-output-projection", replace(REF, project_out=False)),
)


@cache
def leaks(mistake_id: str) -> bool:
    """Whether a mistake's variants let a position see later inputs (on a fixed probe)."""
    rng = np.random.default_rng(23)
    W = CourseWeights([rng.standard_normal((8, 4)) for _ in range(2)], [rng.standard_normal((8, 4)) for _ in range(2)],
                      [rng.standard_normal((8, 4)) for _ in range(2)], rng.standard_normal((8, 8)))
    x = rng.standard_normal((1, 6, 8))
    y = x.copy()
    y[:, 3:] = rng.standard_normal((1, 3, 8))
    for name, variant in VARIANTS:
        if name == mistake_id:
            a, b = variant.forward(x, W)[:, :3], variant.forward(y, W)[:, :3]
            if not np.allclose(a, b, equal_nan=True):
                return True
    return False


def expected(x: np.ndarray, W: CourseWeights) -> np.ndarray:
    """The course's answer, one sequence at a time through ``mha.reference``: (B, T, C)."""
    return np.stack([reference.multi_head_attention(seq, W.q, W.k, W.v, W.o, causal=True) for seq in x])
