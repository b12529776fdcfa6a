"""Mistakes are the reference with one piece swapped, named only from evidence on every failing case."""

import math

import numpy as np
import pytest

from grader import mistakes, tolerance
from grader.cases import all_cases
from grader.mistakes import Failure, diagnose
from mha import reference

CASES = all_cases()


def _tol(case):
    return tolerance.tolerance(case.function, case.args, case.kwargs, case.reference_output())


@pytest.mark.parametrize("mistake", [m for m in mistakes.MISTAKE_IDS if m != "softmax-overflow"])
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
