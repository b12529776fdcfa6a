"""The course's masked multi-head attention, as pure float64 functions.

These are the exact signatures students implement for the grader, and the one
reference that the worked-example check, the model test, the report and the
grader all call. The steps are numbered as the course numbers them:

    1) project the inputs:   Q = X W_Q,  K = X W_K,  V = X W_V      (per head)
    2) scaled scores:        S = Q Kᵀ / √d_k
    3) causal mask:          M[i, j] = 0 if j <= i else −inf
    4) softmax per row:      A = softmax(S + M)
    5) head output:          head = A V
    6) concatenate heads:    C = [head_1 | … | head_h]                (side by side)
    7) output projection:    Y = C W_O

Inputs may be numpy arrays, torch tensors or nested lists; every result is a
float64 numpy array. A wrong shape raises ValueError naming the argument and
both shapes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# The student contract: the functions a submission defines, in the course's order, with these signatures.
STUDENT_FUNCTIONS = (
    "project",
    "scaled_scores",
    "causal_mask",
    "softmax",
    "attention_weights",
    "attention_head",
    "multi_head_attention",
)

__all__ = [
    "STUDENT_FUNCTIONS",
    *STUDENT_FUNCTIONS,
    "as_matrix",
    "HeadTrace",
    "head_trace",
    "MultiHeadTrace",
    "multi_head_trace",
]


def as_matrix(value: Any, name: str) -> np.ndarray:
    """Convert a numpy array, torch tensor or nested list to a float64 matrix."""
    if hasattr(value, "detach"):  # a torch tensor, without importing torch here
        value = value.detach().cpu().double().numpy()
    try:
        matrix = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a matrix of numbers ({exc})") from None
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, but has shape {matrix.shape}")
    return matrix


def _shape(shape: tuple[int | str, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def project(X: Any, W: Any) -> np.ndarray:
    """Step 1: X (n, d_model) @ W (d_model, d_k) -> (n, d_k)."""
    X, W = as_matrix(X, "X"), as_matrix(W, "W")
    if W.shape[0] != X.shape[1]:
        raise ValueError(
            f"W has shape {_shape(W.shape)} but X has shape {_shape(X.shape)}: "
            f"W must have {X.shape[1]} rows, one per column of X, i.e. shape {_shape((X.shape[1], 'd_k'))}"
        )
    return X @ W  # (n, d_k)


def scaled_scores(Q: Any, K: Any) -> np.ndarray:
    """Step 2: S = Q Kᵀ / √d_k, with d_k the number of columns of Q."""
    Q, K = as_matrix(Q, "Q"), as_matrix(K, "K")
    if K.shape[1] != Q.shape[1]:
        raise ValueError(
            f"K has shape {_shape(K.shape)} but Q has shape {_shape(Q.shape)}: "
            f"K must have {Q.shape[1]} columns (d_k), like Q"
        )
    d_k = Q.shape[1]
    return (Q @ K.T) / math.sqrt(d_k)  # (n, m)


def causal_mask(n: int) -> np.ndarray:
    """Step 3: the additive (n, n) mask, 0 on and below the diagonal, −inf above."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer (the number of tokens), got {n!r}")
    future = np.triu(np.ones((n, n), dtype=bool), k=1)  # True where j > i
    return np.where(future, -np.inf, 0.0)  # (n, n)


def softmax(S: Any) -> np.ndarray:
    """Step 4: row-wise softmax, stable for large scores (subtract each row's max)."""
    S = as_matrix(S, "S")
    row_max = S.max(axis=1, keepdims=True)  # (n, 1)
    # A fully masked row has max −inf; shifting by 0 keeps it from turning into NaN
    # here, and the division below then reports it as a row with no finite score.
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    exp = np.exp(S - row_max)  # (n, m), every entry in [0, 1]
    total = exp.sum(axis=1, keepdims=True)  # (n, 1), >= 1 unless the row is all −inf
    if np.any(total == 0):
        row = int(np.argmax(total[:, 0] == 0)) + 1
        raise ValueError(f"S row {row} has no finite score (every entry is −inf), so softmax is undefined")
    return exp / total


@dataclass(frozen=True)
class HeadTrace:
    """Every intermediate of one head, in the order the course computes them."""

    Q: np.ndarray  # (n, d_k)
    K: np.ndarray  # (m, d_k)
    V: np.ndarray  # (m, d_v)
    S: np.ndarray  # (n, m)  Q Kᵀ / √d_k
    M: np.ndarray  # (n, m)  causal mask (all zeros when not causal)
    S_masked: np.ndarray  # (n, m)  S + M
    A: np.ndarray  # (n, m)  softmax(S + M)
    output: np.ndarray  # (n, d_v)  A V


@dataclass(frozen=True)
class MultiHeadTrace:
    heads: list[HeadTrace]
    concat: np.ndarray  # (n, h·d_v)
    output: np.ndarray  # (n, d_out)


def head_trace(Q: Any, K: Any, V: Any, causal: bool = True) -> HeadTrace:
    """Steps 2-5 of one head from its Q, K and V, keeping every intermediate."""
    V, K = as_matrix(V, "V"), as_matrix(K, "K")
    if V.shape[0] != K.shape[0]:
        raise ValueError(
            f"V has shape {_shape(V.shape)} but K has {K.shape[0]} rows: V needs one row per key, "
            f"i.e. shape {_shape((K.shape[0], 'd_v'))}"
        )
    Q = as_matrix(Q, "Q")
    # 2) scaled scores
    S = scaled_scores(Q, K)  # (n, m)
    n, m = S.shape
    # 3) causal mask; without one, M is all zeros so that S_masked is always S + M
    if causal and n != m:
        raise ValueError(
            f"a causal mask needs as many queries as keys, but Q has shape {_shape(Q.shape)} "
            f"and K has shape {_shape(K.shape)}"
        )
    M = causal_mask(n) if causal else np.zeros((n, m))  # (n, m)
    S_masked = S + M  # (n, m)
    # 4) softmax per row
    A = softmax(S_masked)  # (n, m)
    # 5) head output
    return HeadTrace(Q=Q, K=K, V=V, S=S, M=M, S_masked=S_masked, A=A, output=A @ V)  # output (n, d_v)


def attention_weights(Q: Any, K: Any, causal: bool = True) -> np.ndarray:
    """Steps 2-4: A = softmax(Q Kᵀ / √d_k + M), with M the causal mask when causal."""
    Q, K = as_matrix(Q, "Q"), as_matrix(K, "K")
    # The weights need no values: an empty V (m, 0) makes step 5 cost nothing.
    no_values = np.empty((K.shape[0], 0))  # (m, 0)
    return head_trace(Q, K, no_values, causal).A  # (n, m)


def attention_head(Q: Any, K: Any, V: Any, causal: bool = True) -> np.ndarray:
    """Step 5: head = A V, (n, d_v)."""
    return head_trace(Q, K, V, causal).output


def _check_heads(X: np.ndarray, W_Q: Sequence, W_K: Sequence, W_V: Sequence) -> tuple[list, list, list]:
    lists = {}
    for name, weights in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if isinstance(weights, np.ndarray):
            one_matrix = np.ndim(weights) == 2
        else:
            one_matrix = hasattr(weights, "detach") and weights.dim() == 2
        if one_matrix:
            raise ValueError(f"{name} must be a list of per-head matrices, "
                             "one (d_model, d_k) matrix per head, not one matrix")
        lists[name] = [as_matrix(w, f"{name}[{i}]") for i, w in enumerate(weights)]
    h = len(lists["W_Q"])
    if h == 0:
        raise ValueError("W_Q must hold at least one head's matrix")
    for name in ("W_K", "W_V"):
        if len(lists[name]) != h:
            raise ValueError(f"{name} has {len(lists[name])} heads but W_Q has {h}: "
                             "give one matrix per head in each list")
    first = {name: mats[0].shape for name, mats in lists.items()}
    for name, mats in lists.items():
        for i, w in enumerate(mats):
            if w.shape[0] != X.shape[1]:
                raise ValueError(
                    f"{name}[{i}] has shape {_shape(w.shape)} but X has shape {_shape(X.shape)}: "
                    f"each weight matrix needs {X.shape[1]} rows (d_model)"
                )
            if w.shape != first[name]:
                raise ValueError(f"{name}[{i}] has shape {_shape(w.shape)} "
                                 f"but {name}[0] has shape {_shape(first[name])}")
    if first["W_K"][1] != first["W_Q"][1]:
        raise ValueError(
            f"W_K[0] has shape {_shape(first['W_K'])} but W_Q[0] has shape {_shape(first['W_Q'])}: "
            "queries and keys need the same d_k"
        )
    return lists["W_Q"], lists["W_K"], lists["W_V"]


def multi_head_trace(
    X: Any, W_Q: Sequence, W_K: Sequence, W_V: Sequence, W_O: Any, causal: bool = True
) -> MultiHeadTrace:
    """Run masked multi-head attention and keep every intermediate of every head."""
    X = as_matrix(X, "X")  # (n, d_model)
    W_Q, W_K, W_V = _check_heads(X, W_Q, W_K, W_V)
    W_O = as_matrix(W_O, "W_O")
    h, d_v = len(W_V), W_V[0].shape[1]
    if W_O.shape[0] != h * d_v:
        raise ValueError(
            f"W_O has shape {_shape(W_O.shape)} but the {h} concatenated heads have {h * d_v} columns: "
            f"W_O needs shape {_shape((h * d_v, 'd_model'))}"
        )
    heads = []
    for Wq, Wk, Wv in zip(W_Q, W_K, W_V, strict=True):
        # 1) project
        Q, K, V = project(X, Wq), project(X, Wk), project(X, Wv)  # (n, d_k), (n, d_k), (n, d_v)
        # 2)-5) one head
        heads.append(head_trace(Q, K, V, causal))
    # 6) concatenate side by side
    concat = np.concatenate([head.output for head in heads], axis=1)  # (n, h·d_v)
    # 7) output projection
    return MultiHeadTrace(heads=heads, concat=concat, output=concat @ W_O)  # (n, d_model)


def multi_head_attention(
    X: Any, W_Q: Sequence, W_K: Sequence, W_V: Sequence, W_O: Any, causal: bool = True
) -> np.ndarray:
    """Steps 1-7: Concat(head_1 … head_h) W_O, (n, d_model)."""
    return multi_head_trace(X, W_Q, W_K, W_V, W_O, causal).output
