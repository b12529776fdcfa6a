"""The numeric policy: float32 rounding of correct math always passes, every real mistake always fails."""

import math

import numpy as np
import pytest

from grader import tolerance
from grader.functions import mistakes
from grader.functions.cases import all_cases
from grader.functions.contract import MISTAKE_IDS
from mha import reference

# Judging is silent: a numpy warning (inf - inf, 0/0) would reach the grader's output.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

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


@pytest.mark.corpus  # every case on ten seeds (tens of seconds): out of the fast lane
def test_float32_math_passes_every_case_on_ten_seeds_with_room_to_spare():
    worst = 0.0
    for seed in SEEDS:
        for case in all_cases(seed):
            expected = case.reference_output()
            got = np.asarray(FLOAT32[case.function](*case.args, **case.kwargs), dtype=np.float64)
            tol = tolerance.tolerance(case.function, case.args, case.kwargs, expected)
            assert tolerance.passes(got, expected, tol), (seed, case.function, case.group, case.label)
            worst = max(worst, _ratio(got, expected, tol))
    assert worst < 0.1  # float32 uses a small share of the tolerance (measured: docs/numerics.md)


@pytest.mark.corpus  # every catalogued mistake over every case (tens of seconds): out of the fast lane
@pytest.mark.parametrize("mistake", [m for m in MISTAKE_IDS if m != "softmax-overflow"])
def test_every_catalog_mistake_misses_the_tolerance_by_far_on_ordinary_inputs(mistake):
    """Worked and hidden cases (on ±1000 scores a saturated softmax can hide a wrong scale entirely): every
    case where the mistake changes the result at all (by more than a billionth of the tolerance) fails, by
    more than ten tolerances, and there is such a case."""
    changed, smallest = 0, np.inf
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
                if wrong.shape == expected.shape and _ratio(wrong, expected, tol) > 1e-9:
                    changed += 1
                    assert not tolerance.passes(wrong, expected, tol), (seed, case.function, case.label)
                    smallest = min(smallest, _ratio(wrong, expected, tol))
    assert changed > 0
    assert smallest > 10, smallest  # each mistake by far (measured: docs/numerics.md)


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


def _formula(function, args, kwargs, scale, eps=tolerance.EPS32):
    """The docstring's tol = FACTOR · √inner · (eps · scale + condition), with the scale given by hand."""
    expected = getattr(reference, function)(*args, **kwargs)
    condition = tolerance._condition(function, args, kwargs, expected, eps)
    return tolerance.FACTOR * math.sqrt(tolerance._inner(args)) * (eps * scale + condition)


RNG = np.random.default_rng(7)
Q3, K3, V3 = RNG.standard_normal((3, 3, 2))
MHA_ARGS = (RNG.standard_normal((3, 4)), [RNG.standard_normal((4, 2)) for _ in range(2)],
            [RNG.standard_normal((4, 2)) for _ in range(2)], [RNG.standard_normal((4, 3)) for _ in range(2)],
            RNG.standard_normal((6, 4)))


@pytest.mark.parametrize("function, args, kwargs, scale", [
    # a product that cancels to 0: the scale is its terms' size, max|X|·max|W| (÷√d_k for the scores)
    ("project", (np.array([[3.0, -3.0]]), np.array([[2.0], [2.0]])), {}, 3.0 * 2.0),
    ("scaled_scores", (np.array([[3.0, 3.0, 0.5, 0.0]]), np.array([[2.0, -2.0, 0.0, 0.0]])), {}, 3.0 * 2.0 / 2.0),
    # a result larger than its terms' size (a sum of many), then a case without terms
    ("project", (np.full((1, 9), 2.0), np.full((9, 1), 3.0)), {}, 54.0),
    ("softmax", (np.array([[0.0, 2.0, -1.0], [5.0, 5.0, -np.inf]]),), {}, reference.softmax(
        np.array([[0.0, 2.0, -1.0], [5.0, 5.0, -np.inf]])).max()),
    ("attention_head", (Q3, K3, V3), {"causal": False}, np.abs(reference.attention_head(Q3, K3, V3, False)).max()),
    ("multi_head_attention", MHA_ARGS, {"causal": True}, np.abs(reference.multi_head_attention(*MHA_ARGS)).max()),
    # all zeros: a scale of 1, not 0, so that a result that must be 0 still has a tolerance
    ("causal_mask", (1,), {}, 1.0),
])
def test_the_tolerance_is_its_documented_formula_term_by_term(function, args, kwargs, scale):
    expected = getattr(reference, function)(*args, **kwargs)
    got = tolerance.tolerance(function, args, kwargs, expected)
    assert got == pytest.approx(_formula(function, args, kwargs, scale), rel=1e-12)
    assert got > 0


@pytest.mark.parametrize("function, args, scale", [
    ("project", (np.array([[3.0, -3.0]]), np.array([[2.0], [2.0]])), 3.0 * 2.0),  # its terms' size
    ("scaled_scores", (np.array([[3.0, 3.0, 0.5, 0.0]]), np.array([[2.0, -2.0, 0.0, 0.0]])), 3.0 * 2.0 / 2.0),
    ("project", (np.full((1, 9), 2.0), np.full((9, 1), 3.0)), 54.0),  # its result's size
    ("causal_mask", (1,), 1.0),  # all zeros: a scale of 1
])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_the_floor_is_the_tolerance_without_its_condition_at_each_precision(function, args, scale, dtype):
    expected = getattr(reference, function)(*args)
    eps = float(np.finfo(tolerance.LOW_PRECISION[dtype]).eps)
    floor = tolerance.floor(function, args, expected, dtype)
    assert floor == pytest.approx(tolerance.FACTOR * math.sqrt(tolerance._inner(args)) * eps * scale, rel=1e-12)
    assert 0 < floor <= tolerance.tolerance(function, args, {}, expected, dtype)
    if dtype == "float32":
        assert floor == tolerance.floor(function, args, expected)  # float32 unless told


def test_the_longest_dimension_among_the_inputs_is_the_inner_size():
    assert tolerance._inner((np.ones((2, 3)), np.ones((3, 7)))) == 7
    assert tolerance._inner(MHA_ARGS) == 6  # W_O's rows, inside no list; heads' matrices inside lists count too
    assert tolerance._inner((np.ones((1, 2)), [np.ones((2, 9))], [])) == 9
    assert tolerance._inner((4,)) == 1  # causal_mask's n is a number, not a dimension
    assert tolerance._inner((np.ones((1, 2)), [np.ones((1, 1))] * 5)) == 2  # five heads are not a dimension


def test_the_scale_is_the_largest_finite_size_ignoring_infinities_and_nan():
    assert tolerance._finite_max(np.array([[-5.0, 2.0, np.inf, -np.inf, np.nan]])) == 5.0
    assert tolerance._finite_max(np.array([[np.inf, np.nan]])) == 0.0
    assert tolerance._finite_max(np.array([[-3.0]])) == 3.0


def test_a_lower_precision_gets_a_proportionally_larger_tolerance():
    X, W = np.random.default_rng(3).standard_normal((2, 3, 3))
    expected = X @ W
    ratio = tolerance.tolerance("project", (X, W), {}, expected, "float16") / tolerance.tolerance(
        "project", (X, W), {}, expected)
    eps16 = float(np.finfo(np.float16).eps)
    assert ratio == pytest.approx(eps16 / tolerance.EPS32, rel=0.01)  # the condition scales with eps too
    assert tolerance.tolerance("project", (10 * X, W), {}, 10 * expected) == pytest.approx(
        10 * tolerance.tolerance("project", (X, W), {}, expected), rel=1e-9)


@pytest.mark.parametrize("dtype, low", [("torch.float32", "float32"), ("float32", "float32"), ("float16", "float16"),
                                        ("torch.float16", "float16"), ("float64", None), ("list", None),
                                        ("torch.bfloat16", None), ("", None)])
def test_the_precision_of_a_dtype_name(dtype, low):
    assert tolerance.precision(dtype) == low


def test_a_rounding_moves_each_entry_by_at_most_eps_of_itself_and_leaves_numbers_alone():
    rng = np.random.default_rng(0)
    a = np.array([[1.0, -2.0], [1e3, 0.0]])
    moved = tolerance._perturbed([a, (a, 3)], 1e-3, rng)
    assert isinstance(moved, list) and moved[1][1] == 3
    for m in (moved[0], moved[1][0]):
        assert m.shape == a.shape and not np.array_equal(m, a)
        assert np.all(np.abs(m - a) <= 1e-3 * np.abs(a)) and m[1, 1] == 0.0
    assert np.array_equal(tolerance._perturbed(a, 0.0, rng), a)


def test_the_course_steps_of_the_condition_run_are_the_reference_when_nothing_is_rounded():
    """At eps = 0 the perturbed run is the reference exactly (on every case), and the condition is 0."""
    for case in all_cases():
        expected = case.reference_output()
        with np.errstate(all="ignore"):
            run = tolerance._low_precision_run(case.function, case.args, case.kwargs, 0.0, np.random.default_rng(0))
        np.testing.assert_allclose(run, expected, rtol=1e-12, atol=1e-12, err_msg=f"{case.function} {case.label}")
        assert tolerance._condition(case.function, case.args, case.kwargs, expected, 0.0) == pytest.approx(
            0.0, abs=1e-12)


def test_the_condition_is_the_largest_deviation_of_the_perturbed_runs():
    S = np.array([[812.0, 813.0, -100.0]])
    expected = reference.softmax(S)
    deviations = [np.abs(tolerance._low_precision_run("softmax", (S,), {}, 1e-7, np.random.default_rng(d))
                         - expected).max() for d in range(tolerance.DRAWS)]
    assert tolerance._condition("softmax", (S,), {}, expected, 1e-7) == max(deviations) > 0


def test_passes_needs_the_same_shape_and_every_entry_within_the_tolerance():
    expected = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert tolerance.passes(expected + 0.5, expected, 0.5)  # at the tolerance exactly: passes
    assert not tolerance.passes(expected + 0.5 + 1e-9, expected, 0.5)
    one_off = expected.copy()
    one_off[1, 0] += 1.0
    assert not tolerance.passes(one_off, expected, 0.5)  # three entries of four within are not enough
    assert not tolerance.passes(np.array([[1.0, 2.0]]), expected[:1].repeat(2, axis=0), 0.5)  # broadcasts, still wrong


class _Recording:
    """A generator that moves nothing and records the shape of every array it is asked to move."""

    def __init__(self):
        self.shapes = []

    def uniform(self, low, high, size):
        self.shapes.append(tuple(size))
        return np.zeros(size)


def test_every_step_of_a_head_is_rounded_not_only_its_inputs():
    """The condition models float32 rounding each input and each step's result (Q Kᵀ, the weights, A V)."""
    n, d = 3, 2
    Q, K, V = np.ones((3, n, d))
    for function, args, kwargs, steps in [
        ("softmax", (np.ones((n, n)),), {}, [(n, n)]),  # one step: its input, rounded once
        ("attention_weights", (Q, K), {}, [(n, d), (n, d), (n, n), (n, n)]),
        ("attention_head", (Q, K, V), {"causal": False}, [(n, d), (n, d), (n, d), (n, n), (n, n), (n, d)]),
        ("multi_head_attention", (np.ones((n, 4)), [np.ones((4, d))] * 2, [np.ones((4, d))] * 2,
                                  [np.ones((4, d))] * 2, np.ones((4, 4))), {},
         [(n, 4), *[(4, d)] * 6, (4, 4), *[(n, d), (n, d), (n, d), (n, n), (n, n), (n, d)] * 2]),
    ]:
        rng = _Recording()
        got = tolerance._low_precision_run(function, args, kwargs, 1e-7, rng)
        assert rng.shapes == steps, function
        np.testing.assert_allclose(got, getattr(reference, function)(*args, **kwargs), rtol=1e-12, atol=1e-12)
