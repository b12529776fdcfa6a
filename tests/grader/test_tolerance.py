"""The numeric policy: float32 rounding of correct math always passes, every real mistake always fails."""

import numpy as np
import pytest

from grader import mistakes, tolerance
from grader.cases import all_cases
from mha import reference

SEEDS = range(10)


def _f32(a):
    return np.asarray(a, dtype=np.float32)


def _softmax32(S):
    S = _f32(S)
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _weights32(Q, K, causal=True):
    Q, K = _f32(Q), _f32(K)
    S = Q @ K.T / np.float32(np.sqrt(Q.shape[1]))
    if causal:
        S = S + np.triu(np.full(S.shape, -np.inf, dtype=np.float32), k=1)
    return _softmax32(S)


# The course's math, computed in float32 throughout (what torch's default dtype and nn.Linear do).
FLOAT32 = {
    "project": lambda X, W: _f32(X) @ _f32(W),
    "scaled_scores": lambda Q, K: _f32(Q) @ _f32(K).T / np.float32(np.sqrt(_f32(Q).shape[1])),
    "causal_mask": lambda n: np.triu(np.full((n, n), -np.inf, dtype=np.float32), k=1),
    "softmax": _softmax32,
    "attention_weights": _weights32,
    "attention_head": lambda Q, K, V, causal=True: _weights32(Q, K, causal) @ _f32(V),
    "multi_head_attention": lambda X, W_Q, W_K, W_V, W_O, causal=True: np.concatenate(
        [
            _weights32(_f32(X) @ _f32(q), _f32(X) @ _f32(k), causal) @ (_f32(X) @ _f32(v))
            for q, k, v in zip(W_Q, W_K, W_V, strict=True)
        ],
        axis=1,
    ) @ _f32(W_O),
}


def _ratio(got, expected, tol) -> float:
    """max |got - expected| / tol over the entries where the reference is finite (inf when got is not)."""
    finite = np.isfinite(expected)
    if not np.array_equal(got[~finite], expected[~finite]):
        return np.inf
    with np.errstate(invalid="ignore"):
        diff = np.abs(np.where(finite, got - expected, 0.0))
    return float(np.max(np.where(np.isnan(diff), np.inf, diff))) / tol


def test_float32_math_passes_every_case_on_ten_seeds_with_room_to_spare():
    worst = 0.0
    for seed in SEEDS:
        for case in all_cases(seed):
            expected = case.reference_output()
            got = np.asarray(FLOAT32[case.function](*case.args, **case.kwargs), dtype=np.float64)
            tol = tolerance.tolerance(case.function, case.args, case.kwargs, expected)
            assert tolerance.passes(got, expected, tol), (seed, case.function, case.group, case.label)
            worst = max(worst, _ratio(got, expected, tol))
    assert worst < 0.1  # measured 0.022: float32 uses a fortieth of the tolerance at most


@pytest.mark.parametrize("mistake", [m for m in mistakes.MISTAKE_IDS if m != "softmax-overflow"])
def test_every_catalog_mistake_misses_the_tolerance_by_far_on_ordinary_inputs(mistake):
    """Worked and hidden cases (on ±1000 scores a saturated softmax can hide a wrong scale entirely)."""
    smallest = np.inf
    for seed in SEEDS:
        for case in (c for c in all_cases(seed) if c.group != "large"):
            expected = case.reference_output()
            tol = tolerance.tolerance(case.function, case.args, case.kwargs, expected)
            for m, variant in mistakes.VARIANTS:
                if m != mistake:
                    continue
                try:
                    wrong = variant.run(case.function, case.args, case.kwargs)
                except (mistakes.NotApplicable, ValueError):
                    continue
                if wrong.shape == expected.shape and not tolerance.passes(wrong, expected, tol):
                    smallest = min(smallest, _ratio(wrong, expected, tol))
    assert smallest > 10, smallest  # measured: 18 (missing-scale), 320 (wrong-scale), > 3000 for the rest


def test_tolerance_grows_where_a_softmax_is_sensitive_and_with_the_size_of_the_result():
    # two close scores of about 800 share a row: float32 moves their weights by about 800·eps
    close_large = np.array([[812.0, 813.0, -100.0]])
    small = np.array([[0.2, 1.0, -1.0]])
    t = lambda S: tolerance.tolerance("softmax", (S,), {}, reference.softmax(S))  # noqa: E731
    assert t(close_large) > 100 * t(small)
    X, W = np.random.default_rng(0).standard_normal((2, 3, 3))
    assert tolerance.tolerance("project", (10 * X, W), {}, 10 * X @ W) == pytest.approx(
        10 * tolerance.tolerance("project", (X, W), {}, X @ W), rel=0.5)


def test_nan_is_never_close_and_infinities_must_agree_in_sign():
    a = np.array([np.nan, np.inf, -np.inf, 1.0])
    assert tolerance.close(a, a, 1e-6).tolist() == [False, True, True, True]
    assert not tolerance.close(np.array([np.inf]), np.array([-np.inf]), 1.0)[0]
