"""Mistakes are the reference with one piece swapped, named only from evidence on every failing case."""

import math

import numpy as np
import pytest

from grader import tolerance
from grader.functions import mistakes
from grader.functions.cases import all_cases
from grader.functions.contract import MISTAKE_IDS
from grader.functions.mistakes import Failure, diagnose
from mha import reference

# Judging is silent: a numpy warning (inf - inf, 0/0) would reach the grader's output.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

CASES = all_cases()


def _tol(case):
    return tolerance.tolerance(case.function, case.args, case.kwargs, case.reference_output())


@pytest.mark.parametrize("mistake", [m for m in MISTAKE_IDS if m != "softmax-overflow"])
def test_every_mistake_changes_some_ordinary_case_so_it_can_be_seen(mistake):
    variants = [v for m, v in mistakes.VARIANTS if m == mistake]
    seen = set()
    for case in CASES:
        for variant in variants:
            try:
                wrong = variant.run(case.function, case.args, case.kwargs)
            except (mistakes.NotApplicable, ValueError):
                continue
            if not tolerance.passes(wrong, case.reference_output(), _tol(case)):
                seen.add(case.group)
    assert {"worked", "hidden"} & seen


def test_a_naive_softmax_overflows_only_on_large_scores():
    for case in CASES:
        naive = mistakes.OVERFLOW.run(case.function, case.args, case.kwargs)
        if case.group == "large":
            assert not np.all(np.isfinite(naive)), case.label
        else:
            assert tolerance.passes(naive, case.reference_output(), _tol(case)), case.label


def test_the_reference_output_is_explained_by_no_mistake():
    for case in CASES:
        expected = case.reference_output()
        assert mistakes.explaining(case.function, case.args, case.kwargs, expected, expected, _tol(case)) == frozenset()


def test_scores_off_by_a_constant_are_a_wrong_scale_whatever_the_divisor():
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    expected = reference.scaled_scores(Q, K)
    explain = lambda got: mistakes.explaining("scaled_scores", (Q, K), {}, got, expected, 1e-6)  # noqa: E731
    assert explain(expected / 3.7) == {"wrong-scale"}
    assert explain(expected * math.sqrt(5)) == {"missing-scale"}
    assert explain(np.zeros_like(expected)) == frozenset()


def test_nan_against_nan_is_never_evidence():
    expected = np.array([[1.0, 0.0], [0.5, 0.5]])
    want = np.array([[np.nan, np.nan], [0.5, 0.5]])  # a variant that differs only by NaN
    got = np.array([[np.nan, np.nan], [0.5, 0.5]])
    assert not mistakes.explains(got, want, expected, 1e-9)
    want2 = np.array([[np.nan, np.nan], [0.2, 0.8]])
    assert not mistakes.explains(np.array([[np.nan, np.nan], [0.5, 0.5]]), want2, expected, 1e-9)
    assert mistakes.explains(np.array([[np.nan, np.nan], [0.2, 0.8]]), want2, expected, 1e-9)


def test_a_name_needs_every_failing_case_of_the_function_to_agree():
    leak = [
        Failure("attention_weights", "hidden", frozenset()),
        Failure("attention_weights", "large", frozenset({"mask-not-applied"})),
    ]
    assert diagnose(leak) == {"attention_weights": ()}
    inverted = [
        Failure("causal_mask", "hidden", frozenset({"mask-inverted"})),
        Failure("causal_mask", "worked", frozenset({"mask-inverted"})),
    ]
    assert diagnose(inverted) == {"causal_mask": ("mask-inverted",)}


def test_two_equally_good_explanations_name_neither_unless_another_function_pins_one():
    both = frozenset({"mask-not-applied", "mask-not-additive"})
    assert diagnose([Failure("attention_weights", "large", both)]) == {"attention_weights": ()}
    pinned = [
        Failure("attention_weights", "large", both),
        Failure("causal_mask", "hidden", frozenset({"mask-not-additive"})),
    ]
    assert diagnose(pinned)["attention_weights"] == ("mask-not-additive",)


def test_softmax_overflow_needs_the_students_softmax_to_fail_only_on_large_scores():
    overflow = [Failure("softmax", "large", overflowed=True), Failure("attention_head", "large", overflowed=True)]
    assert diagnose(overflow) == {"softmax": ("softmax-overflow",), "attention_head": ("softmax-overflow",)}
    also_ordinary = overflow + [Failure("softmax", "hidden")]
    assert diagnose(also_ordinary)["softmax"] == ()
    stable_softmax = [Failure("attention_weights", "large", overflowed=True)]  # e.g. tril then renormalise
    assert diagnose(stable_softmax) == {"attention_weights": ()}


def test_the_softmax_of_a_variant_gives_nan_for_a_row_with_no_finite_score_and_the_softmax_elsewhere():
    S = np.array([[1000.0, 1000.0 + math.log(3.0)], [-np.inf, -np.inf], [0.0, -np.inf]])
    A = mistakes.softmax_or_nan(S)
    np.testing.assert_allclose(A[[0, 2]], [[0.25, 0.75], [1.0, 0.0]])
    assert np.isnan(A[1]).all()
    np.testing.assert_allclose(mistakes._softmax_whole(np.array([[0.0, -np.inf], [math.log(3.0), 2000.0]])),
                               [[0.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(mistakes._softmax_whole(np.array([[0.0, math.log(3.0)]])), [[0.25, 0.75]])
    np.testing.assert_allclose(mistakes._softmax_whole(np.array([[-1000.0, -1000.0 + math.log(3.0)]])), [[0.25, 0.75]])
    np.testing.assert_allclose(mistakes._softmax_columns(np.array([[0.0], [math.log(3.0)]])), [[0.25], [0.75]])


@pytest.mark.parametrize("function", reference.STUDENT_FUNCTIONS)
def test_the_unmistaken_pipeline_is_the_reference_with_the_same_defaults(function):
    for case in (c for c in CASES if c.function == function):
        np.testing.assert_allclose(mistakes.REF.run(function, case.args, {}), getattr(reference, function)(*case.args),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mistakes.REF.run(function, case.args, case.kwargs), case.reference_output(),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.corpus  # every mistake's variant over every case (tens of seconds): out of the fast lane
def test_explaining_names_every_mistake_whose_variant_explains_the_case():
    """Not only the first: e.g. on ±1000 scores an unapplied mask and a 0/1 one give the same weights."""
    several = 0
    for case in CASES:
        expected, tol = case.reference_output(), _tol(case)
        outputs = []
        for _, variant in mistakes.EVIDENCE:
            try:
                outputs.append(variant.run(case.function, case.args, case.kwargs))
            except (mistakes.NotApplicable, ValueError, IndexError):
                outputs.append(None)
        for got in (o for o in outputs if o is not None):
            want = {m for (m, _), o in zip(mistakes.EVIDENCE, outputs, strict=True)
                    if o is not None and mistakes.explains(got, o, expected, tol)}
            named = mistakes.explaining(case.function, case.args, case.kwargs, got, expected, tol)
            assert named == want or (not want and named == {"wrong-scale"}), (case.function, case.label)
            several += len(want) > 1
    assert several > 0


def test_a_variant_explains_only_a_result_of_its_shape_that_agrees_where_it_says_something():
    expected = np.array([[1.0, 0.0], [0.5, 0.5]])
    want = np.array([[1.0, 0.0], [0.2, 0.8]])
    assert mistakes.explains(want.copy(), want, expected, 1e-9)
    assert not mistakes.explains(want[:1], want, expected, 1e-9)  # another shape
    assert not mistakes.explains(want.T, want, expected, 1e-9)
    half_nan = np.array([[1.0, 0.0], [np.nan, np.nan]])
    assert not mistakes.explains(want, half_nan, expected, 1e-9)  # the variant's NaN is no licence for any value
    assert not mistakes.explains(np.array([[np.nan, 0.0], [0.2, 0.8]]), want, expected, 1e-9)  # nor the student's
    assert not mistakes.explains(expected, expected, expected, 1e-9)  # agreeing with the reference explains nothing
    # a variant of another shape than the reference (no output projection): agreement itself is the evidence
    wide = np.array([[1.0, 2.0, 3.0]])
    assert mistakes.explains(wide.copy(), wide, expected, 1e-9)
    assert not mistakes.explains(np.full((1, 3), np.nan), np.full((1, 3), np.nan), expected, 1e-9)
    assert not mistakes.explains(np.full((1, 3), np.inf), np.full((1, 3), np.inf), expected, 1e-9)  # nothing finite


@pytest.mark.parametrize("got, wrong_scale", [
    (lambda e: e / 3.7, True),
    (lambda e: e * 1.5, True),
    (lambda e: -e, False),  # a negative factor is not a divisor
    (lambda e: e * (1 + 1e-6), False),  # within rounding of 1: no factor at all
    (lambda e: e + 0.1, False),  # not proportional
    (lambda e: np.where(e > 0, np.inf, e), False),
    (lambda e: 2 * e * np.where(np.arange(e.size).reshape(e.shape) % 2, 1.2, 0.8), False),  # 2 ± 20 %: no one factor
])
def test_scores_are_a_wrong_scale_only_when_off_by_one_positive_factor(got, wrong_scale):
    rng = np.random.default_rng(1)
    Q, K = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    expected = reference.scaled_scores(Q, K)
    named = mistakes.explaining("scaled_scores", (Q, K), {}, got(expected), expected, 1e-9)
    assert named == ({"wrong-scale"} if wrong_scale else frozenset())


def test_small_scores_off_by_a_factor_are_a_wrong_scale_too():
    rng = np.random.default_rng(2)
    Q, K = 0.01 * rng.standard_normal((3, 2)), 0.01 * rng.standard_normal((3, 2))
    expected = reference.scaled_scores(Q, K)  # every |score| far below 1
    assert mistakes.explaining("scaled_scores", (Q, K), {}, expected / 3, expected, 1e-12) == {"wrong-scale"}


def test_zero_scores_have_no_factor_to_be_off_by():
    Q, K = np.zeros((2, 2)), np.ones((2, 2))
    assert mistakes.explaining("scaled_scores", (Q, K), {}, np.ones((2, 2)), np.zeros((2, 2)), 1e-9) == frozenset()


def test_softmax_overflow_is_not_named_for_large_failures_that_did_not_overflow():
    quiet = [Failure("softmax", "large", overflowed=False), Failure("attention_head", "large", overflowed=True)]
    assert diagnose(quiet) == {"softmax": (), "attention_head": ()}
    ordinary = [Failure("softmax", "large", overflowed=True), Failure("attention_head", "hidden", overflowed=True)]
    assert diagnose(ordinary) == {"softmax": ("softmax-overflow",), "attention_head": ()}
    assert diagnose([]) == {}
