"""Mistakes are the reference with one piece swapped; each is visible on the cases and named by behaviour."""

import math

import numpy as np
import pytest

from grader import mistakes
from grader.cases import all_cases
from mha import reference

CASES = all_cases()


@pytest.mark.parametrize("mistake", mistakes.MISTAKE_IDS)
def test_every_mistake_changes_some_case_so_it_can_be_seen(mistake):
    variants = [v for m, v in mistakes.VARIANTS if m == mistake]
    seen = set()
    for case in CASES:
        for variant in variants:
            try:
                wrong = variant.run(case.function, case.args, case.kwargs)
            except (mistakes.NotApplicable, ValueError):
                continue
            if not mistakes.matches(wrong, case.reference_output()):
                seen.add(case.group)
    assert {"worked", "hidden"} & seen or mistake == "softmax-overflow"
    if mistake == "softmax-overflow":
        assert seen == {"large"}  # only large scores overflow


def test_the_reference_output_matches_no_mistake():
    for case in CASES:
        expected = case.reference_output()
        assert mistakes.identify(case.function, case.args, case.kwargs, expected, expected) == []


def test_scores_off_by_a_constant_are_a_wrong_scale_whatever_the_divisor():
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    expected = reference.scaled_scores(Q, K)
    assert mistakes.identify("scaled_scores", (Q, K), {}, expected / 3.7, expected) == ["wrong-scale"]
    assert mistakes.identify("scaled_scores", (Q, K), {}, expected * math.sqrt(5), expected) == ["missing-scale"]
    assert mistakes.identify("scaled_scores", (Q, K), {}, np.zeros_like(expected), expected) == []


def test_matches_requires_the_same_shape_and_the_same_infinities():
    a = np.array([[0.0, -np.inf], [0.0, 0.0]])
    assert mistakes.matches(a, a.copy())
    assert not mistakes.matches(a, np.zeros((2, 2)))
    assert not mistakes.matches(np.where(np.isinf(a), np.inf, a), a)
    assert not mistakes.matches(a, a[:1])
