"""The inputs every function is checked on: the worked example, hidden seeded cases, large scores.

Every case holds only inputs. Each function gets the reference's inputs (e.g. ``attention_head`` gets
the reference Q, K and V), so one early mistake is not charged again at every later step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from grader.functions.contract import DEFAULT_SEED, FUNCTIONS, GROUPS
from grader.messages import Item
from mha import reference, worked_example

LARGE_SCORE = 1e3  # the largest |score| of a large-magnitude case
HIDDEN_SCORE = 4.0  # the largest |score| of a hidden multi-head case, over its heads


@dataclass(frozen=True)
class Case:
    function: str
    group: str  # worked | hidden | large
    args: tuple
    kwargs: dict = field(default_factory=dict)
    # What the student is told about the case: a catalog key and its parameters (sizes, never values).
    label_key: str = "case.sizes"
    label: dict = field(default_factory=dict)

    def reference_output(self) -> np.ndarray:
        return getattr(reference, self.function)(*self.args, **self.kwargs)


def _worked() -> list[Case]:
    ex = worked_example.load()
    tr = worked_example.trace(ex)
    cases = []
    for name, weights in (("W_Q", ex.W_Q), ("W_K", ex.W_K), ("W_V", ex.W_V)):
        for head, W in enumerate(weights, start=1):
            cases.append(
                Case("project", "worked", (ex.X, W), label_key="case.worked_project", label={"w": Item(name, head)})
            )
    for head, t in enumerate(tr.heads, start=1):
        lab = {"label_key": "case.worked_head", "label": {"head": head}}
        cases.append(Case("scaled_scores", "worked", (t.Q, t.K), **lab))
        cases.append(Case("softmax", "worked", (t.S_masked,), **lab))
        cases.append(Case("attention_weights", "worked", (t.Q, t.K), {"causal": True}, **lab))
        cases.append(Case("attention_head", "worked", (t.Q, t.K, t.V), {"causal": True}, **lab))
    cases.append(Case("causal_mask", "worked", (ex.n,), label_key="case.worked", label={}))
    mha_args = (ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O)
    cases.append(Case("multi_head_attention", "worked", mha_args, {"causal": True}, label_key="case.worked", label={}))
    return cases


# Every test's shapes, the same for every student: the sizes, the edge cases (one token, d_k = 1, one head, more
# than 8 tokens, n = d_k, the non-causal cases) and the value scales are the course's; only the values are the
# student's, drawn from their seed. A mistake that depends on a size, on which sizes repeat or on a planted
# feature of the large scores (below) therefore fails the same tests for everyone (benchmarks/same_grade.py).
PROJECT_SHAPES = ((1, 3, 2), (2, 1, 1), (4, 4, 4), (3, 6, 1), (5, 8, 3), (7, 2, 5), (9, 5, 5),
                  (12, 16, 8))  # n, d_model, d_k
# d_k >= 2 on most cases, or a missing √d_k would go unseen; n = d_k once, where dividing by √n is right
SCORE_SHAPES = ((1, 3), (2, 1), (4, 4), (5, 2), (3, 8), (8, 5), (10, 3), (12, 7))  # n, d_k
MASK_SIZES = (1, 2, 4, 7, 9, 12)
# softmax: never one column of several rows (R's t(apply(S, 1, f)), the course's idiom, makes it one row)
SOFTMAX_SHAPES = ((1, 1), (2, 5), (5, 2), (6, 6), (9, 12), (12, 9))  # n, m
MASKED_SOFTMAX_SIZES = (3, 8, 12)  # n: square scores with the causal mask's −inf, as attention produces them
ATTENTION_SHAPES = ((1, 2, True), (2, 1, True), (3, 3, True), (5, 2, True), (9, 4, True), (12, 8, True),
                    (4, 6, False), (10, 3, False))  # n, d_k, causal
# multi-head: 24 cases, because a small error in every score (rounded, float16) shows near the tolerance on
# some of them and not others: with this many every student's cases have some where it shows
MULTI_HEAD_SHAPES = ((8, 1, 4, True), (5, 2, 3, True), (4, 3, 2, True), (9, 4, 2, True), (6, 2, 1, True),
                     (7, 3, 3, False), (12, 4, 2, True), (10, 2, 4, True), (11, 3, 3, True), (12, 1, 8, True),
                     (7, 4, 1, True), (12, 2, 2, False),
                     *((n, h, d_k, True) for n in (10, 12) for h in (2, 3, 4) for d_k in (2, 3)))  # n, h, d_k, causal
LARGE_SOFTMAX_SHAPES = ((4, 5), (6, 6), (5, 8))  # n, m
LARGE_ATTENTION_SHAPES = ((3, 5), (4, 6), (6, 8))  # n, d_k: d_k > n, so that the planted scores are exact
LARGE_MULTI_HEAD_SHAPES = ((4, 2, 6), (5, 3, 7))  # n, h, d_k (d_k > n again)
TIE_GAP = (0.5, 2.0)  # the near tie of the large cases: its two scores this far apart, so neither weight saturates


def _qkv(rng: np.random.Generator, n: int, d_k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(rng.standard_normal((n, d_k)) for _ in range(3))


def _mha_inputs(rng, n, h, d_k):
    """Inputs that follow the course: d_k = d_model / h, i.e. d_model = h·d_k."""
    d_model = h * d_k
    X = rng.standard_normal((n, d_model))  # (n, d_model)
    W_Q, W_K, W_V = ([rng.standard_normal((d_model, d_k)) for _ in range(h)] for _ in range(3))
    W_O = rng.standard_normal((h * d_k, d_model))  # (h·d_k, d_model)
    return X, W_Q, W_K, W_V, W_O


# Large magnitude: scores of about ±1e3, where exp overflows unless each row's max is subtracted. Random scores
# of that size saturate most rows, and whether a row hides a wrong scale, underflows or overflows would then
# depend on the student's values; so every large case plants the same features, only their values drawn:
def _tie(rng, row: np.ndarray, columns: int, top: float) -> None:
    """Make ``row[:columns]`` a near tie at ``top``: two of its scores ``top`` and a TIE_GAP below, the others at
    least 20 below, so that its two weights are far from 0 and 1 and move with any error in the scores."""
    row[:columns] = rng.uniform(-LARGE_SCORE, top - 20.0, columns)
    first, second = rng.choice(columns, size=2, replace=False)
    row[first], row[second] = top, top - rng.uniform(*TIE_GAP)


def _planted_scores(rng, n: int) -> np.ndarray:
    """Causal scores (n, n), n >= 2, of about ±LARGE_SCORE, with the same features for every student:
    - every row but the first: its visible scores a near tie (``_tie``) at a top in [0, LARGE_SCORE], the last
      row's exactly +LARGE_SCORE (a naive exp overflows): no saturation hides a wrong scale, or float16's
      rounding of scores this large, from these rows' weights;
    - the first row: its one visible score far below zero, ~745 or more below the last row's top (a softmax
      shifted by the whole matrix's max underflows to 0/0), and a future score far above it (a softmax taken
      before the mask and renormalised after underflows there too)."""
    S = rng.uniform(-LARGE_SCORE, LARGE_SCORE, (n, n))  # (n, n): future scores anywhere
    for i in range(1, n):
        _tie(rng, S[i], i + 1, LARGE_SCORE if i == n - 1 else rng.uniform(0.0, LARGE_SCORE))
    S[0, 0] = -rng.uniform(0.6, 1.0) * LARGE_SCORE
    S[0, rng.integers(1, n)] = rng.uniform(0.6, 1.0) * LARGE_SCORE
    return S


def _keys_for(Q: np.ndarray, S: np.ndarray) -> np.ndarray:
    """K (n, d_k) with Q Kᵀ / √d_k = S exactly: Q (n, d_k) has full row rank (n <= d_k, random)."""
    return (np.linalg.pinv(Q) @ (S * math.sqrt(Q.shape[1]))).T


def _balanced(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A·c and B/c, their largest entries alike (their product unchanged): neither input dwarfs the other."""
    c = math.sqrt(np.abs(B).max() / np.abs(A).max())
    return A * c, B / c


# Each test's cases from one generator: the student's seed and the test's place.
def _draw_project(rng) -> list[Case]:
    cases = []
    for n, d_model, d_k in PROJECT_SHAPES:
        X, W = rng.standard_normal((n, d_model)), rng.standard_normal((d_model, d_k))  # (n, d_model), (d_model, d_k)
        cases.append(Case("project", "hidden", (X, W), label={"n": n, "d_model": d_model, "d_k": d_k}))
    return cases


def _draw_scaled_scores(rng) -> list[Case]:
    cases = []
    for n, d_k in SCORE_SHAPES:
        Q, K, _ = _qkv(rng, n, d_k)
        cases.append(Case("scaled_scores", "hidden", (Q, K), label={"n": n, "d_k": d_k}))
    return cases


def _draw_causal_mask(rng) -> list[Case]:
    return [Case("causal_mask", "hidden", (n,), label={"n": n}) for n in MASK_SIZES]


def _draw_softmax(rng) -> list[Case]:
    cases = [Case("softmax", "hidden", (rng.normal(0, 2, (n, m)),), label={"n": n, "m": m})
             for n, m in SOFTMAX_SHAPES]
    for n in MASKED_SOFTMAX_SIZES:
        S = rng.normal(0, 2, (n, n)) + reference.causal_mask(n)  # (n, n)
        cases.append(Case("softmax", "hidden", (S,), label_key="case.sizes_masked", label={"n": n, "m": n}))
    return cases


def _draw_attention(name: str):
    def draw(rng) -> list[Case]:
        cases = []
        for n, d_k, causal in ATTENTION_SHAPES:
            Q, K, V = _qkv(rng, n, d_k)
            args = (Q, K) if name == "attention_weights" else (Q, K, V)
            cases.append(Case(name, "hidden", args, {"causal": causal}, label={"n": n, "d_k": d_k, "causal": causal}))
        return cases
    return draw


def _draw_multi_head(rng) -> list[Case]:
    """X scaled so that every case's largest |score| over its heads is HIDDEN_SCORE: scores of X W_Q (X W_K)ᵀ grow
    with d_model, and left so a few students would get scores of ±50 that nobody else gets."""
    cases = []
    for n, h, d_k, causal in MULTI_HEAD_SHAPES:
        X, W_Q, W_K, W_V, W_O = _mha_inputs(rng, n, h, d_k)
        biggest = max(np.abs(reference.scaled_scores(X @ q, X @ k)).max() for q, k in zip(W_Q, W_K, strict=True))
        X = X * math.sqrt(HIDDEN_SCORE / biggest)  # scores grow with the square of X
        cases.append(Case("multi_head_attention", "hidden", (X, W_Q, W_K, W_V, W_O), {"causal": causal},
                          label={"n": n, "h": h, "d_k": d_k, "d_model": h * d_k, "causal": causal}))
    return cases


def _draw_large_softmax(rng) -> list[Case]:
    """Scores of ±LARGE_SCORE: every row but the last a near tie (``_tie``) at a top in [LARGE_SCORE / 2,
    LARGE_SCORE] (float16 rounding, or clipping, moves its weights; a naive exp overflows), the last row ~1,400
    or more below them (a softmax shifted by the whole matrix's max gives 0/0 there)."""
    cases = []
    for n, m in LARGE_SOFTMAX_SHAPES:
        S = np.empty((n, m))  # (n, m)
        for i in range(n - 1):
            _tie(rng, S[i], m, LARGE_SCORE if i == 0 else rng.uniform(0.5, 1.0) * LARGE_SCORE)
        S[-1] = rng.uniform(-LARGE_SCORE, -0.9 * LARGE_SCORE, m)
        cases.append(Case("softmax", "large", (S,), label={"n": n, "m": m}))
    return cases


def _draw_large_attention(name: str):
    def draw(rng) -> list[Case]:
        cases = []
        for n, d_k in LARGE_ATTENTION_SHAPES:
            Q = rng.standard_normal((n, d_k))  # (n, d_k)
            Q, K = _balanced(Q, _keys_for(Q, _planted_scores(rng, n)))
            V = rng.standard_normal((n, d_k))
            args = (Q, K) if name == "attention_weights" else (Q, K, V)
            cases.append(Case(name, "large", args, {"causal": True}, label={"n": n, "d_k": d_k, "causal": True}))
        return cases
    return draw


def _draw_large_multi_head(rng) -> list[Case]:
    """Every head's scores planted as in ``_planted_scores``: W_K solved from X (n <= d_model, full row rank)."""
    cases = []
    for n, h, d_k in LARGE_MULTI_HEAD_SHAPES:
        X, W_Q, _, W_V, W_O = _mha_inputs(rng, n, h, d_k)
        X_inverse = np.linalg.pinv(X)  # (d_model, n): X @ X_inverse = I
        W_K = []
        for i in range(h):
            K = _keys_for(X @ W_Q[i], _planted_scores(rng, n))  # (n, d_k)
            W_Q[i], W_K_i = _balanced(W_Q[i], X_inverse @ K)
            W_K.append(W_K_i)
        cases.append(Case("multi_head_attention", "large", (X, W_Q, W_K, W_V, W_O), {"causal": True},
                          label={"n": n, "h": h, "d_k": d_k, "d_model": h * d_k, "causal": True}))
    return cases


DRAWS = (  # (function, group) -> how its seeded cases are drawn; the order is each test's place
    (("project", "hidden"), _draw_project),
    (("scaled_scores", "hidden"), _draw_scaled_scores),
    (("causal_mask", "hidden"), _draw_causal_mask),
    (("softmax", "hidden"), _draw_softmax),
    (("attention_weights", "hidden"), _draw_attention("attention_weights")),
    (("attention_head", "hidden"), _draw_attention("attention_head")),
    (("multi_head_attention", "hidden"), _draw_multi_head),
    (("softmax", "large"), _draw_large_softmax),
    (("attention_weights", "large"), _draw_large_attention("attention_weights")),
    (("attention_head", "large"), _draw_large_attention("attention_head")),
    (("multi_head_attention", "large"), _draw_large_multi_head),
)


def _hidden_and_large(seed: int) -> list[Case]:
    """Every test's seeded cases, each test drawn on a generator of its own (the seed and the test's place)."""
    cases: list[Case] = []
    for place, (_, draw) in enumerate(DRAWS):
        cases += draw(np.random.default_rng([seed, place]))
    return cases


@lru_cache(maxsize=8)
def all_cases(seed: int = DEFAULT_SEED) -> tuple[Case, ...]:
    """Every case, in function order then group order; the same seed gives the same cases."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    cases = _worked() + _hidden_and_large(seed)
    order = {(f, g): i for i, (f, g) in enumerate((f, g) for f in FUNCTIONS for g in GROUPS)}
    return tuple(sorted(cases, key=lambda c: order[(c.function, c.group)]))
