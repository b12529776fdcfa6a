"""The cases: seeded, within the issue's sizes, and large-score cases that overflow a naive softmax."""

import numpy as np
import pytest

from grader.functions import contract
from grader.functions.cases import LARGE_SCORE, all_cases
from mha import reference, worked_example


def test_the_contract_names_the_references_functions_and_exactly_the_tests_the_cases_draw():
    """The contract holds the names without numpy; the reference and the cases are where they come true."""
    assert contract.FUNCTIONS == reference.STUDENT_FUNCTIONS
    for seed in (contract.DEFAULT_SEED, 7):
        drawn = list(dict.fromkeys((c.function, c.group) for c in all_cases(seed)))
        assert drawn == [(f, g) for f, groups in contract.TESTS.items() for g in groups]
    assert all(set(groups) <= set(contract.GROUPS) for groups in contract.TESTS.values())
    assert contract.functions_with("large") == ("softmax", "attention_weights", "attention_head",
                                                "multi_head_attention")


def test_same_seed_same_cases_other_seed_same_shapes_other_values():
    a, b, c = all_cases(1), all_cases.__wrapped__(1), all_cases(2)
    assert [x.label for x in a] == [x.label for x in b] == [x.label for x in c]
    assert all(np.array_equal(x.reference_output(), y.reference_output()) for x, y in zip(a, b, strict=True))
    seeded = [(x, y) for x, y in zip(a, c, strict=True) if x.group != "worked" and x.function != "causal_mask"]
    assert seeded and not any(np.array_equal(x.args[0], y.args[0]) for x, y in seeded)


def test_every_large_case_plants_its_features_for_every_seed():
    """Every row but the first a near tie (two weights far from 0 and 1); the first row's one visible score far
    below the top, with a future score far above it."""
    for seed in (0, 1, 2):
        for case in (c for c in all_cases(seed) if c.group == "large" and c.function == "attention_weights"):
            S = reference.scaled_scores(*case.args)
            A = case.reference_output()
            assert np.isclose(S.max(), LARGE_SCORE)
            assert S[0, 0] < -0.5 * LARGE_SCORE and S[0, 1:].max() - S[0, 0] > 1000
            for i in range(1, len(S)):
                assert np.sort(A[i])[-2] > 0.1, (seed, i, A[i])


@pytest.mark.corpus  # the hidden cases of many seeds (tens of seconds): out of the fast lane
def test_hidden_cases_stay_within_the_announced_sizes():
    for seed in range(20):
        for case in all_cases(seed):
            label = case.label
            assert 1 <= label.get("n", 1) <= 12
            assert 1 <= label.get("h", 1) <= 4
            assert 1 <= label.get("d_k", 1) <= 8
    heads = {c.label["h"] for c in all_cases() if c.function == "multi_head_attention" and c.group == "hidden"}
    assert heads == {1, 2, 3, 4}


def test_large_cases_reach_scores_of_about_1e3_and_the_reference_stays_finite():
    large = [c for c in all_cases() if c.group == "large"]
    assert {c.function for c in large} == {"softmax", "attention_weights", "attention_head", "multi_head_attention"}
    for case in large:
        out = case.reference_output()
        assert np.all(np.isfinite(out))
        if case.function in ("attention_weights", "attention_head"):
            top = reference.scaled_scores(*case.args[:2]).max()
            assert np.isclose(top, LARGE_SCORE) or top > LARGE_SCORE
        if case.function == "softmax":
            assert np.abs(case.args[0]).max() > 0.9 * LARGE_SCORE


def test_worked_cases_are_the_course_example():
    example = worked_example.load()
    mha_case = next(c for c in all_cases() if c.function == "multi_head_attention" and c.group == "worked")
    assert np.array_equal(mha_case.args[0], example.X)
    np.testing.assert_allclose(mha_case.reference_output(), example.published["output"], atol=5e-4)


@pytest.mark.corpus  # the cases of many seeds (tens of seconds): out of the fast lane
def test_every_multi_head_case_follows_the_course_d_model_equals_h_times_d_k():
    for seed in range(10):
        for case in all_cases(seed):
            if case.function == "multi_head_attention":
                X, W_Q, W_K, W_V, W_O = case.args
                h, d_k = len(W_Q), W_Q[0].shape[1]
                assert X.shape[1] == h * d_k, (seed, case.group, case.label)
                assert W_O.shape == (h * d_k, h * d_k)
