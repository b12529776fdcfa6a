"""The inputs every function is checked on: the worked example, hidden seeded cases, large scores.

Every case holds only inputs. Each function gets the reference's inputs (e.g. ``attention_head`` gets
the reference Q, K and V), so one early mistake is not charged again at every later step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from grader import case_draws
from grader.messages import Item
from mha import reference, worked_example

FUNCTIONS = reference.STUDENT_FUNCTIONS
GROUPS = ("worked", "hidden", "large")
DEFAULT_SEED = 20240917
LARGE_SCORE = 1e3  # the largest |score| of a large-magnitude case


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


def _qkv(rng: np.random.Generator, n: int, d_k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(rng.standard_normal((n, d_k)) for _ in range(3))


def _top_visible_score(Q: np.ndarray, K: np.ndarray) -> float:
    """The largest score a causal query can see (on or below the diagonal)."""
    S = reference.scaled_scores(Q, K)  # (n, n)
    return float(S[np.tril(np.ones(S.shape, dtype=bool))].max())


def _to_large(Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rescale Q and K so that the largest visible score is +LARGE_SCORE: exp of it overflows."""
    if _top_visible_score(Q, K) <= 0:
        K = -K  # flips every score's sign, so the largest visible one becomes positive
    factor = math.sqrt(LARGE_SCORE / max(_top_visible_score(Q, K), 1e-12))
    return Q * factor, K * factor


def _mha_inputs(rng, n, h, d_k):
    """Inputs that follow the course: d_k = d_model / h, i.e. d_model = h·d_k."""
    d_model = h * d_k
    X = rng.standard_normal((n, d_model))  # (n, d_model)
    W_Q, W_K, W_V = ([rng.standard_normal((d_model, d_k)) for _ in range(h)] for _ in range(3))
    W_O = rng.standard_normal((h * d_k, d_model))  # (h·d_k, d_model)
    return X, W_Q, W_K, W_V, W_O


# Each test's draw: its cases from one generator. A test is drawn on its own generator (the student's seed,
# the test's place, the attempt), so redrawing one test leaves every other test's cases as they were.
def _draw_project(rng) -> list[Case]:
    cases = []
    for n, d_model, d_k in [
        (1, 3, 2),
        *((int(rng.integers(2, 13)), int(rng.integers(1, 17)), int(rng.integers(1, 9))) for _ in range(4)),
    ]:
        X, W = rng.standard_normal((n, d_model)), rng.standard_normal((d_model, d_k))  # (n, d_model), (d_model, d_k)
        args = (X, W)
        cases.append(Case("project", "hidden", args, label={"n": n, "d_model": d_model, "d_k": d_k}))
    return cases


def _draw_scaled_scores(rng) -> list[Case]:
    cases = []
    # d_k >= 2 on most cases, or a missing √d_k would go unseen
    for n, d_k in [(1, 3), (2, 1), *((int(rng.integers(2, 13)), int(rng.integers(2, 9))) for _ in range(4))]:
        Q, K, _ = _qkv(rng, n, d_k)
        cases.append(Case("scaled_scores", "hidden", (Q, K), label={"n": n, "d_k": d_k}))
    return cases


def _draw_causal_mask(rng) -> list[Case]:
    return [Case("causal_mask", "hidden", (n,), label={"n": n})
            for n in (1, 2, int(rng.integers(4, 8)), int(rng.integers(8, 13)))]


def _draw_softmax(rng) -> list[Case]:
    cases = []
    # rectangular scores, and masked ones with −inf as attention produces them
    for n, m in [(1, 1), *((int(rng.integers(2, 13)), int(rng.integers(2, 13))) for _ in range(3))]:
        cases.append(Case("softmax", "hidden", (rng.normal(0, 2, (n, m)),), label={"n": n, "m": m}))
    for n in (int(rng.integers(3, 13)), int(rng.integers(3, 13))):
        S = rng.normal(0, 2, (n, n)) + reference.causal_mask(n)  # (n, n)
        cases.append(Case("softmax", "hidden", (S,), label_key="case.sizes_masked", label={"n": n, "m": n}))
    return cases


def _draw_attention(name: str):
    def draw(rng) -> list[Case]:
        cases = []
        for n, d_k, causal in [
            (1, 2, True),
            *((int(rng.integers(3, 13)), int(rng.integers(2, 9)), True) for _ in range(4)),
            *((int(rng.integers(3, 13)), int(rng.integers(2, 9)), False) for _ in range(2)),
        ]:
            Q, K, V = _qkv(rng, n, d_k)
            args = (Q, K) if name == "attention_weights" else (Q, K, V)
            cases.append(Case(name, "hidden", args, {"causal": causal}, label={"n": n, "d_k": d_k, "causal": causal}))
        return cases
    return draw


def _draw_multi_head(rng) -> list[Case]:
    cases = []
    for h, causal in ((1, True), (2, True), (3, True), (4, True), (int(rng.integers(2, 5)), False)):
        n, d_k = int(rng.integers(3, 13)), int(rng.integers(2, 9))
        cases.append(Case("multi_head_attention", "hidden", _mha_inputs(rng, n, h, d_k), {"causal": causal},
                          label={"n": n, "h": h, "d_k": d_k, "d_model": h * d_k, "causal": causal}))
    return cases


# Large magnitude: scores of about ±1e3, where exp overflows unless each row's max is subtracted.
def _draw_large_softmax(rng) -> list[Case]:
    cases = [Case("softmax", "large", (rng.uniform(-LARGE_SCORE, LARGE_SCORE, (n, m)),), label={"n": n, "m": m})
             for n, m in ((4, 5), (6, 6))]
    S = np.vstack([rng.uniform(900, LARGE_SCORE, (2, 5)), rng.uniform(-LARGE_SCORE, -900, (2, 5))])  # (4, 5)
    cases.append(Case("softmax", "large", (S,), label={"n": 4, "m": 5}))
    return cases


def _draw_large_attention(name: str):
    def draw(rng) -> list[Case]:
        cases = []
        for n, d_k in ((5, 4), (8, 3)):
            Q, K, V = _qkv(rng, n, d_k)
            Q, K = _to_large(Q, K)
            args = (Q, K) if name == "attention_weights" else (Q, K, V)
            cases.append(Case(name, "large", args, {"causal": True}, label={"n": n, "d_k": d_k, "causal": True}))
        return cases
    return draw


def _draw_large_multi_head(rng) -> list[Case]:
    cases = []
    for n, h, d_k in ((5, 2, 3), (7, 3, 2)):
        X, W_Q, W_K, W_V, W_O = _mha_inputs(rng, n, h, d_k)
        biggest = max(_top_visible_score(X @ wq, X @ wk) for wq, wk in zip(W_Q, W_K, strict=True))
        if biggest <= 0:
            W_K = [-w for w in W_K]
            biggest = max(_top_visible_score(X @ wq, X @ wk) for wq, wk in zip(W_Q, W_K, strict=True))
        X = X * math.sqrt(LARGE_SCORE / biggest)  # scores grow with the square of X
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
    """Every test's seeded cases, each a draw that tells every catalogued mistake the test can see apart from
    the reference (``grader.case_draws``): per-student cases differ in their values, never in what they catch."""
    cases: list[Case] = []
    for place, ((function, group), draw) in enumerate(DRAWS):
        cases += case_draws.kept_draw(seed, place, function, group, draw)
    return cases


@lru_cache(maxsize=8)
def all_cases(seed: int = DEFAULT_SEED) -> tuple[Case, ...]:
    """Every case, in function order then group order; the same seed gives the same cases."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    cases = _worked() + _hidden_and_large(seed)
    order = {(f, g): i for i, (f, g) in enumerate((f, g) for f in FUNCTIONS for g in GROUPS)}
    return tuple(sorted(cases, key=lambda c: order[(c.function, c.group)]))


def functions_with(group: str) -> tuple[str, ...]:
    """The functions that have cases in ``group``, in FUNCTIONS order (which ones does not depend on the seed)."""
    present = {case.function for case in all_cases() if case.group == group}
    return tuple(f for f in FUNCTIONS if f in present)
