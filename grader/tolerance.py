"""The numeric policy: correct math passes in float32 or float64, on every seed; real mistakes do not.

One tolerance per case, compared entry by entry, ``|got - expected| <= tol``:

    tol = FACTOR · √inner · (eps · scale  +  condition)

- ``eps`` is float32's machine epsilon (1.19e-7): float32 is torch's default and what nn.Linear
  computes in, so it is the coarsest precision the course accepts;
- ``scale`` = max |expected| over the finite entries (1 when that is 0): float32 rounds each entry
  relative to the size of the numbers being summed, and those are of the size of the result; for
  project and scaled_scores, whose one-row results can cancel far below their terms, at least
  max|A|·max|B| (÷√d_k), the size of one term;
- ``inner`` = the longest dimension among the case's inputs: a dot product of that many terms adds up
  that many roundings (√ of it, since they are as often up as down);
- ``condition`` is this case's own sensitivity, measured rather than bounded: how far the course's
  steps move when every input and every step's result (Q, K, V, the scores, the weights, a head's
  output) is moved by up to eps of itself, at random, as float32 rounding does (the largest of
  DRAWS such runs). A softmax turns an absolute error in a score into the same relative error in its
  weight, so on scores of ±1000 float32 loses about three digits there, and only there.

``tests/grader/test_tolerance.py`` asserts the margins on every case of 10 seeds: float32 math well inside
the tolerance, every catalog mistake far outside it; docs/numerics.md has the measured figures.
"""

from __future__ import annotations

import math

import numpy as np

from mha import reference

EPS32 = float(np.finfo(np.float32).eps)  # 1.19e-7
FACTOR = 16.0
DRAWS = 4  # perturbed runs per case; the largest deviation is the case's condition
# The low precisions a result may arrive in (a dtype name without "torch."), as numpy types.
LOW_PRECISION = {"float16": np.float16, "float32": np.float32}


def precision(dtype: str) -> str | None:
    """'float32' for 'torch.float32' or 'float32', likewise float16; None for float64, lists, others."""
    name = dtype.removeprefix("torch.")
    return name if name in LOW_PRECISION else None


def _finite_max(a: np.ndarray) -> float:
    a = np.abs(np.asarray(a, dtype=np.float64))
    a = a[np.isfinite(a)]
    return float(a.max()) if a.size else 0.0


def _perturbed(value, eps: float, rng: np.random.Generator):
    """Each entry moved by up to eps of itself, at random: what one rounding to that precision does."""
    if isinstance(value, (list, tuple)):
        return [_perturbed(v, eps, rng) for v in value]
    if isinstance(value, np.ndarray):
        with np.errstate(invalid="ignore"):
            return value * (1.0 + eps * rng.uniform(-1.0, 1.0, size=value.shape))
    return value


def _low_precision_run(function: str, args: tuple, kwargs: dict, eps: float, rng) -> np.ndarray:
    """The course's steps with every input and intermediate perturbed as rounding to ``eps`` would."""
    r = lambda a: _perturbed(a, eps, rng)  # noqa: E731
    args = r(args)
    if function not in ("attention_weights", "attention_head", "multi_head_attention"):
        return getattr(reference, function)(*args, **kwargs)

    def head(Q, K, V=None, causal=True):
        S = r(reference.scaled_scores(Q, K))  # (n, n)
        M = reference.causal_mask(S.shape[0]) if causal else np.zeros(S.shape)  # (n, n), as head_trace spells it
        A = r(reference.softmax(S + M))  # (n, n)
        return A if V is None else r(A @ V)  # (n, d_v)

    if function in ("attention_weights", "attention_head"):
        return head(*args, **kwargs)
    X, W_Q, W_K, W_V, W_O = args
    heads = [head(r(X @ q), r(X @ k), r(X @ v), **kwargs) for q, k, v in zip(W_Q, W_K, W_V, strict=True)]
    return np.concatenate(heads, axis=1) @ W_O  # (n, h·d_k) @ (h·d_k, d_model)


def _condition(function: str, args: tuple, kwargs: dict, expected: np.ndarray, eps: float) -> float:
    """How far the reference moves when run at precision ``eps``: the largest of DRAWS perturbed runs."""
    worst = 0.0
    for draw in range(DRAWS):
        try:
            with np.errstate(all="ignore"):
                moved = _low_precision_run(function, args, kwargs, eps, np.random.default_rng(draw))
        except ValueError:
            continue
        finite = np.isfinite(expected) & np.isfinite(moved)
        worst = max(worst, float(np.abs(moved[finite] - expected[finite]).max(initial=0.0)))
    return worst


def _terms(function: str, args: tuple) -> float:
    """The size of the products a matrix product sums: its result can cancel far below them."""
    if function == "project":
        return _finite_max(args[0]) * _finite_max(args[1])
    if function == "scaled_scores":
        return _finite_max(args[0]) * _finite_max(args[1]) / math.sqrt(max(np.shape(args[0])[-1], 1))
    return 0.0


def _inner(args: tuple) -> int:
    dims = [1]
    for arg in args:
        for a in arg if isinstance(arg, (list, tuple)) else [arg]:
            dims += list(np.shape(a))
    return max(dims)


def tolerance(function: str, args: tuple, kwargs: dict, expected: np.ndarray, dtype: str = "float32") -> float:
    """The absolute tolerance for every entry of one case's result, at ``dtype``'s precision."""
    eps = float(np.finfo(LOW_PRECISION[dtype]).eps)
    scale = max(_finite_max(expected), _terms(function, args)) or 1.0
    return FACTOR * math.sqrt(_inner(args)) * (eps * scale + _condition(function, args, kwargs, expected, eps))


def floor(function: str, args: tuple, expected: np.ndarray, dtype: str = "float32") -> float:
    """The part of ``tolerance`` that needs no perturbed runs, never more than the whole: a result within it
    passes whatever the case's condition, so a right answer is judged without measuring it."""
    eps = float(np.finfo(LOW_PRECISION[dtype]).eps)
    scale = max(_finite_max(expected), _terms(function, args)) or 1.0
    return FACTOR * math.sqrt(_inner(args)) * eps * scale


def close(got: np.ndarray, want: np.ndarray, tol: float) -> np.ndarray:
    """Entry by entry: finite and within tol, or the same infinity. NaN is never close to anything."""
    with np.errstate(invalid="ignore"):
        both_finite = np.isfinite(got) & np.isfinite(want)
        near = both_finite & (np.abs(np.where(both_finite, got - want, 0.0)) <= tol)
        same_inf = np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want))
    return near | same_inf


def passes(got: np.ndarray, expected: np.ndarray, tol: float) -> bool:
    return got.shape == expected.shape and bool(np.all(close(got, expected, tol)))
