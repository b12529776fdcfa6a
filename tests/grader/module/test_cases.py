"""Question 2's cases with weights, in this process: the worked example published, the hidden ones drawn from the
seed alone, at the sizes the checks are built for."""

import numpy as np

from grader.module import cases
from mha import reference, worked_example


def test_the_worked_case_is_the_published_example_and_the_only_one_whose_numbers_may_be_shown():
    case, ex = cases.worked_case(), worked_example.load()
    assert case.published and case.x.shape == (1, *ex.X.shape) and case.label.key == "case.worked"
    want = reference.multi_head_attention(case.x[0], case.weights.q, case.weights.k, case.weights.v, case.weights.o)
    assert np.allclose(want, reference.multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O))
    assert not any(c.published for c in cases.hidden_cases(0))


def test_the_hidden_cases_are_the_seeds_alone_at_four_sizes_with_batches_and_lengths_in_range():
    first, again, other = cases.hidden_cases(7), cases.hidden_cases(7), cases.hidden_cases(8)
    for a, b in zip(first, again, strict=True):
        assert np.array_equal(a.x, b.x) and np.array_equal(a.weights.o, b.weights.o)
    assert not np.array_equal(first[0].weights.o, other[0].weights.o)
    sizes = [(c.x.shape[2], len(c.weights.q)) for c in first]
    assert sizes == [(8, 2), (12, 3), (16, 4), (6, 2)]
    for case in first:
        B, T, d_model = case.x.shape
        h = len(case.weights.q)
        assert 1 <= B <= 2 and 3 <= T <= 12
        assert case.weights.q[0].shape == (d_model, d_model // h) and case.weights.o.shape == (d_model, d_model)
        assert case.label.values["params"] == f"B={B}, T={T}, d_model={d_model}, h={h}"
