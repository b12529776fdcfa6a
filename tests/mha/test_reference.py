import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mha import crosscheck, reference


def random_weights(rng, n, h, d_k, d_model=None, scale=1.0):
    d_model = d_model or h * d_k
    X = rng.standard_normal((n, d_model)) * scale
    W_Q, W_K, W_V = ([rng.standard_normal((d_model, d_k)) for _ in range(h)] for _ in range(3))
    W_O = rng.standard_normal((h * d_k, d_model))
    return X, W_Q, W_K, W_V, W_O


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 16), h=st.integers(1, 4), d_k=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
def test_reference_equals_torch_multihead_attention_on_random_shapes(n, h, d_k, seed):
    args = random_weights(np.random.default_rng(seed), n, h, d_k)
    trace = reference.multi_head_trace(*args)
    torch_out, torch_weights = crosscheck.torch_multihead_attention(*args)
    np.testing.assert_allclose(trace.output, torch_out, rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.stack([hd.A for hd in trace.heads]), torch_weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(crosscheck.sdpa_multihead_attention(*args), trace.output, rtol=0, atol=1e-10)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), d_k=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
def test_attention_head_equals_sdpa_without_mask(n, d_k, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((n, d_k)) for _ in range(3))
    expected = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(m)[None] for m in (Q, K, V)))[0]
    np.testing.assert_allclose(reference.attention_head(Q, K, V, causal=False), expected.numpy(), atol=1e-12)


def test_causal_mask_is_zero_on_and_below_the_diagonal_and_minus_inf_above():
    M = reference.causal_mask(4)
    assert M.shape == (4, 4)
    for i in range(4):
        for j in range(4):
            assert M[i, j] == (0.0 if j <= i else -np.inf)


@pytest.mark.parametrize("scale", [1e4, -1e4, 1e300])
def test_softmax_of_huge_scores_has_no_nan_or_inf(scale):
    S = np.array([[1.0, 0.5, -1.0], [-2.0, 3.0, 0.0], [0.0, 0.0, 0.0]]) * scale
    A = reference.softmax(S)
    assert np.all(np.isfinite(A))
    np.testing.assert_allclose(A.sum(axis=1), 1.0)
    assert A[1, 1] == pytest.approx(1.0 if scale > 0 else 0.0, abs=1e-12)


def test_multi_head_attention_with_scores_near_1e4_is_finite_and_causal():
    X, W_Q, W_K, W_V, W_O = random_weights(np.random.default_rng(0), 6, 2, 4, scale=60.0)
    trace = reference.multi_head_trace(X, W_Q, W_K, W_V, W_O)
    assert max(np.abs(h.S).max() for h in trace.heads) > 1e3
    assert np.all(np.isfinite(trace.output))
    for head in trace.heads:
        assert np.all(np.triu(head.A, k=1) == 0)
        np.testing.assert_allclose(head.A.sum(axis=1), 1.0)


def test_numpy_torch_and_list_inputs_give_the_same_result():
    X, W_Q, W_K, W_V, W_O = random_weights(np.random.default_rng(1), 5, 2, 3)
    expected = reference.multi_head_attention(X, W_Q, W_K, W_V, W_O)
    as_torch = [torch.tensor(X), [torch.tensor(w) for w in W_Q], [torch.tensor(w) for w in W_K],
                [torch.tensor(w) for w in W_V], torch.tensor(W_O)]
    as_lists = [X.tolist(), [w.tolist() for w in W_Q], [w.tolist() for w in W_K], [w.tolist() for w in W_V],
                W_O.tolist()]
    np.testing.assert_array_equal(reference.multi_head_attention(*as_torch), expected)
    np.testing.assert_array_equal(reference.multi_head_attention(*as_lists), expected)
    assert expected.dtype == np.float64


def test_scaled_scores_divides_by_sqrt_of_the_columns_of_q():
    Q = np.array([[1.0, 2.0, 3.0, 4.0]])
    K = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 2.0]])
    np.testing.assert_allclose(reference.scaled_scores(Q, K), [[10.0 / 2.0, 8.0 / 2.0]])


@pytest.mark.parametrize(
    "call, fragments",
    [
        (lambda: reference.project(np.ones((3, 4)), np.ones((3, 2))), ["W", "(3, 2)", "X", "(3, 4)"]),
        (lambda: reference.scaled_scores(np.ones((3, 2)), np.ones((3, 5))), ["K", "(3, 5)", "Q", "(3, 2)"]),
        (lambda: reference.attention_head(np.ones((3, 2)), np.ones((3, 2)), np.ones((4, 2))), ["V", "(4, 2)", "K"]),
        (lambda: reference.attention_weights(np.ones((2, 2)), np.ones((3, 2))), ["Q", "(2, 2)", "K", "(3, 2)"]),
        (lambda: reference.softmax(np.ones(3)), ["S", "(3,)"]),
        (lambda: reference.causal_mask(0), ["n", "0"]),
        (
            lambda: reference.multi_head_attention(np.ones((3, 4)), [np.ones((4, 2))] * 2, [np.ones((4, 2))] * 2,
                                                   [np.ones((4, 2))] * 2, np.ones((3, 4))),
            ["W_O", "(3, 4)", "(4, d_model)"],
        ),
        (
            lambda: reference.multi_head_attention(np.ones((3, 4)), [np.ones((4, 2))] * 2, [np.ones((4, 2))],
                                                   [np.ones((4, 2))] * 2, np.ones((4, 4))),
            ["W_K", "1 heads", "W_Q", "2"],
        ),
        (
            lambda: reference.multi_head_attention(np.ones((3, 4)), [np.ones((5, 2))] * 2, [np.ones((4, 2))] * 2,
                                                   [np.ones((4, 2))] * 2, np.ones((4, 4))),
            ["W_Q[0]", "(5, 2)", "X", "(3, 4)"],
        ),
    ],
)
def test_bad_shapes_raise_value_error_naming_the_argument_and_shapes(call, fragments):
    with pytest.raises(ValueError) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value)


def test_one_head_trace_gives_the_public_functions_results_and_no_mask_is_all_zeros():
    rng = np.random.default_rng(2)
    Q, K, V = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    head = reference.head_trace(Q, K, V, causal=False)
    assert head.M.shape == (4, 5) and not head.M.any()
    np.testing.assert_array_equal(head.S_masked, head.S)
    np.testing.assert_array_equal(reference.attention_weights(Q, K, causal=False), head.A)
    np.testing.assert_array_equal(reference.attention_head(Q, K, V, causal=False), head.output)
    causal = reference.head_trace(Q[:4], K[:4], V[:4])
    np.testing.assert_array_equal(causal.M, reference.causal_mask(4))
    np.testing.assert_array_equal(reference.attention_weights(Q[:4], K[:4]), causal.A)
