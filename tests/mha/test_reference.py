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


H2 = [np.ones((4, 2))] * 2  # two heads' (d_model = 4, d_k = 2) matrices


@pytest.mark.parametrize("call, message", [
    (lambda: reference.as_matrix([["a", "b"]], "X"),
     "X must be a matrix of numbers (could not convert string to float: 'a')"),
    (lambda: reference.as_matrix([1.0, 2.0, 3.0], "Q"), "Q must be a 2-D matrix, but has shape (3,)"),
    (lambda: reference.as_matrix(np.ones((1, 2, 2)), "K"), "K must be a 2-D matrix, but has shape (1, 2, 2)"),
    (lambda: reference.project(np.ones((3, 4)), np.ones((3, 2))),
     "W has shape (3, 2) but X has shape (3, 4): W must have 4 rows, one per column of X, i.e. shape (4, d_k)"),
    (lambda: reference.scaled_scores(np.ones((3, 2)), np.ones((3, 5))),
     "K has shape (3, 5) but Q has shape (3, 2): K must have 2 columns (d_k), like Q"),
    (lambda: reference.softmax([[0.0, 1.0], [-np.inf, -np.inf]]),
     "S row 2 has no finite score (every entry is −inf), so softmax is undefined"),
    (lambda: reference.attention_weights(np.ones((2, 2)), np.ones((3, 2))),
     "a causal mask needs as many queries as keys, but Q has shape (2, 2) and K has shape (3, 2)"),
    (lambda: reference.attention_head(np.ones((3, 2)), np.ones((3, 2)), np.ones((4, 2))),
     "V has shape (4, 2) but K has 3 rows: V needs one row per key, i.e. shape (3, d_v)"),
    (lambda: reference.multi_head_attention(np.ones((3, 4)), np.ones((4, 2)), H2, H2, np.ones((4, 4))),
     "W_Q must be a list of per-head matrices, one (d_model, d_k) matrix per head, not one matrix"),
    (lambda: reference.multi_head_attention(np.ones((3, 4)), H2, torch.ones(4, 2), H2, np.ones((4, 4))),
     "W_K must be a list of per-head matrices, one (d_model, d_k) matrix per head, not one matrix"),
    (lambda: reference.multi_head_attention(np.ones((3, 4)), [], [], [], np.ones((4, 4))),
     "W_Q must hold at least one head's matrix"),
    (lambda: reference.multi_head_attention(np.ones((3, 4)), H2, H2, H2[:1], np.ones((4, 4))),
     "W_V has 1 heads but W_Q has 2: give one matrix per head in each list"),
    (lambda: reference.multi_head_attention(np.ones((3, 4)), H2, [np.ones((4, 2)), np.ones((5, 2))], H2,
                                            np.ones((4, 4))),
     "W_K[1] has shape (5, 2) but X has shape (3, 4): each weight matrix needs 4 rows (d_model)"),
    (lambda: reference.multi_head_attention(np.ones((3, 4)), H2, H2, [np.ones((4, 2)), np.ones((4, 3))],
                                            np.ones((4, 4))),
     "W_V[1] has shape (4, 3) but W_V[0] has shape (4, 2)"),
    (lambda: reference.multi_head_attention(np.ones((3, 4)), H2, [np.ones((4, 3))] * 2, H2, np.ones((4, 4))),
     "W_K[0] has shape (4, 3) but W_Q[0] has shape (4, 2): queries and keys need the same d_k"),
    (lambda: reference.multi_head_attention(np.ones((3, 4)), H2, H2, H2, np.ones((3, 4))),
     "W_O has shape (3, 4) but the 2 concatenated heads have 4 columns: W_O needs shape (4, d_model)"),
])
def test_each_error_says_exactly_what_was_wrong(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message


@pytest.mark.parametrize("n", [0, -2, True, 2.0, "3", None])
def test_causal_mask_refuses_anything_but_a_positive_integer(n):
    with pytest.raises(ValueError) as info:
        reference.causal_mask(n)
    assert str(info.value) == f"n must be a positive integer (the number of tokens), got {n!r}"


def test_causal_mask_takes_numpy_integers_and_a_single_token():
    np.testing.assert_array_equal(reference.causal_mask(np.int64(2)), [[0.0, -np.inf], [0.0, 0.0]])
    np.testing.assert_array_equal(reference.causal_mask(1), [[0.0]])


def test_a_torch_tensor_becomes_a_float64_matrix_of_the_same_values():
    tensor = torch.tensor([[1.5, -2.0]], dtype=torch.float32, requires_grad=True)
    matrix = reference.as_matrix(tensor, "X")
    assert matrix.dtype == np.float64 and matrix.tolist() == [[1.5, -2.0]]
    assert reference.as_matrix([[1, 2]], "X").dtype == np.float64


def test_a_softmax_row_partly_masked_keeps_its_finite_entries_and_a_masked_row_below_a_finite_one_is_named():
    A = reference.softmax([[0.0, -np.inf], [np.log(3.0), 0.0]])
    np.testing.assert_allclose(A, [[1.0, 0.0], [0.75, 0.25]])
    with pytest.raises(ValueError, match="S row 3 has no finite score"):
        reference.softmax([[0.0, 1.0], [1.0, 0.0], [-np.inf, -np.inf]])


def test_the_traces_keep_every_intermediate_in_the_courses_order():
    X, W_Q, W_K, W_V, W_O = random_weights(np.random.default_rng(4), 3, 2, 2)
    trace = reference.multi_head_trace(X, W_Q, W_K, W_V, W_O, causal=False)
    for head, q, k, v in zip(trace.heads, W_Q, W_K, W_V, strict=True):
        np.testing.assert_array_equal(head.Q, X @ q)
        np.testing.assert_array_equal(head.K, X @ k)
        np.testing.assert_array_equal(head.V, X @ v)
        np.testing.assert_array_equal(head.S, reference.scaled_scores(X @ q, X @ k))
        assert not head.M.any()
        np.testing.assert_array_equal(head.output, head.A @ head.V)
    np.testing.assert_array_equal(trace.concat, np.concatenate([h.output for h in trace.heads], axis=1))
    np.testing.assert_array_equal(trace.output, trace.concat @ W_O)
    causal = reference.multi_head_trace(X, W_Q, W_K, W_V, W_O)
    np.testing.assert_array_equal(causal.heads[0].S_masked, causal.heads[0].S + reference.causal_mask(3))
    assert not np.allclose(causal.output, trace.output)
    np.testing.assert_array_equal(reference.multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=False), trace.output)


VEC = object()  # stands for np.ones(3), a vector


@pytest.mark.parametrize("function, args, name", [
    ("project", (VEC, np.ones((3, 2))), "X"),
    ("project", (np.ones((2, 3)), VEC), "W"),
    ("scaled_scores", (VEC, np.ones((2, 3))), "Q"),
    ("scaled_scores", (np.ones((2, 3)), VEC), "K"),
    ("softmax", (VEC,), "S"),
    ("attention_weights", (VEC, np.ones((3, 3))), "Q"),
    ("attention_weights", (np.ones((3, 3)), VEC), "K"),
    ("attention_head", (VEC, np.ones((3, 3)), np.ones((3, 2))), "Q"),
    ("attention_head", (np.ones((3, 3)), VEC, np.ones((3, 2))), "K"),
    ("attention_head", (np.ones((3, 3)), np.ones((3, 3)), VEC), "V"),
    ("multi_head_attention", (VEC, H2, H2, H2, np.ones((4, 4))), "X"),
    ("multi_head_attention", (np.ones((3, 4)), [np.ones((4, 2)), VEC], H2, H2, np.ones((4, 4))), "W_Q[1]"),
    ("multi_head_attention", (np.ones((3, 4)), H2, [VEC, np.ones((4, 2))], H2, np.ones((4, 4))), "W_K[0]"),
    ("multi_head_attention", (np.ones((3, 4)), H2, H2, [np.ones((4, 2)), VEC], np.ones((4, 4))), "W_V[1]"),
    ("multi_head_attention", (np.ones((3, 4)), H2, H2, H2, VEC), "W_O"),
])
def test_a_vector_where_a_matrix_belongs_is_named_by_its_argument(function, args, name):
    vector = lambda a: np.ones(3) if a is VEC else a  # noqa: E731
    args = tuple([vector(a) for a in arg] if isinstance(arg, list) else vector(arg) for arg in args)
    with pytest.raises(ValueError) as info:
        getattr(reference, function)(*args)
    assert str(info.value) == f"{name} must be a 2-D matrix, but has shape (3,)"


def test_every_function_with_a_causal_argument_is_causal_by_default():
    X, W_Q, W_K, W_V, W_O = random_weights(np.random.default_rng(5), 3, 2, 2)
    Q, K, V = X @ W_Q[0], X @ W_K[0], X @ W_V[0]
    for function, args in (("attention_weights", (Q, K)), ("attention_head", (Q, K, V)),
                           ("multi_head_attention", (X, W_Q, W_K, W_V, W_O))):
        default = getattr(reference, function)(*args)
        np.testing.assert_array_equal(default, getattr(reference, function)(*args, causal=True))
        assert not np.allclose(default, getattr(reference, function)(*args, causal=False)), function
    np.testing.assert_array_equal(reference.head_trace(Q, K, V).M, reference.causal_mask(3))
    np.testing.assert_array_equal(reference.multi_head_trace(X, W_Q, W_K, W_V, W_O).heads[1].M,
                                  reference.causal_mask(3))
