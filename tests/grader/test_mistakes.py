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


# ---------------------------------------------------------------------------- each piece, on a matrix by hand
# Every piece a variant is built from, on a small matrix whose answer is worked out here: these run in
# milliseconds, so that `make mutation` needs none of the tests above that run every variant over every case.

LN3 = math.log(3.0)


def test_a_loop_that_skips_the_last_row_leaves_it_as_scores_unless_there_is_one_row():
    S = np.array([[0.0, LN3], [LN3, 0.0], [5.0, 7.0]])
    np.testing.assert_allclose(mistakes._softmax_skipping_last_row(S), [[0.25, 0.75], [0.75, 0.25], [5.0, 7.0]])
    np.testing.assert_allclose(mistakes._softmax_skipping_last_row(S[:1]), [[0.25, 0.75]])  # R's 1:0 visits row 1


def test_r_loop_from_zero_leaves_the_last_row_as_scores_even_when_it_is_the_only_one():
    S = np.array([[0.0, LN3], [LN3, 0.0]])
    np.testing.assert_allclose(mistakes._softmax_loop_from_zero(S), [[0.25, 0.75], [LN3, 0.0]])
    np.testing.assert_allclose(mistakes._softmax_loop_from_zero(S[:1]), [[0.0, LN3]])


def test_a_transposed_softmax_returns_each_rows_weights_as_a_column():
    S = np.array([[0.0, LN3], [0.0, 0.0]])
    np.testing.assert_allclose(mistakes._softmax_transposed(S), [[0.25, 0.5], [0.75, 0.5]])


def test_r_apply_without_t_drops_a_one_column_result_to_a_vector():
    S = np.array([[0.0, LN3], [0.0, 0.0]])
    np.testing.assert_allclose(mistakes._softmax_apply_dropping(S), [[0.25, 0.5], [0.75, 0.5]])
    column = mistakes._softmax_apply_dropping(np.array([[5.0], [-2.0], [0.0]]))
    assert column.shape == (3,)
    np.testing.assert_allclose(column, [1.0, 1.0, 1.0])
    assert mistakes._softmax_apply_dropping(np.array([[7.0]])).shape == (1,)


def test_r_apply_over_columns_is_a_column_softmax_and_drops_a_one_row_result_to_a_vector():
    S = np.array([[0.0, 0.0], [LN3, 0.0]])
    np.testing.assert_allclose(mistakes._softmax_apply_over_columns(S), [[0.25, 0.5], [0.75, 0.5]])
    row = mistakes._softmax_apply_over_columns(np.array([[5.0, -2.0, 0.0]]))
    assert row.shape == (3,)
    np.testing.assert_allclose(row, [1.0, 1.0, 1.0])


def test_the_exponentials_r_students_shift_by_each_rows_maximum_or_by_the_whole_matrixs():
    S = np.array([[0.0, LN3], [-np.inf, -np.inf], [2.0, 1.0], [np.inf, 0.0]])
    np.testing.assert_allclose(mistakes._exp_rows_shifted(S),
                               [[1 / 3, 1.0], [0.0, 0.0], [1.0, math.exp(-1.0)], [np.inf, 1.0]])  # +inf: no shift
    np.testing.assert_allclose(mistakes._exp_shifted(S[:3]), np.exp(S[:3] - 2.0))
    np.testing.assert_allclose(mistakes._exp_shifted(np.full((2, 2), -np.inf)), np.zeros((2, 2)))


def test_a_vector_is_recycled_down_the_columns_or_along_the_rows():
    np.testing.assert_array_equal(mistakes._recycled(np.array([1.0, 2.0]), (2, 3), "F"), [[1, 1, 1], [2, 2, 2]])
    np.testing.assert_array_equal(mistakes._recycled(np.array([1.0, 2.0]), (2, 3), "C"), [[1, 2, 1], [2, 1, 2]])


def test_a_softmax_divided_by_the_wrong_sums_divides_by_column_or_row_sums_recycled_as_r_does():
    S = np.log(np.array([[1.0, 2.0], [3.0, 4.0]]))  # exp(S) is [[1, 2], [3, 4]]
    E = np.exp
    # E / colSums(E): colSums (4, 6) recycled down the columns: row i divided by column i's sum
    np.testing.assert_allclose(mistakes._softmax_sums(E, 0, "F")(S), [[1 / 4, 2 / 4], [3 / 6, 4 / 6]])
    # sweep(E, 2, rowSums(E), "/"): rowSums (3, 7) along the rows: column j divided by row j's sum
    np.testing.assert_allclose(mistakes._softmax_sums(E, 1, "C")(S), [[1 / 3, 2 / 7], [3 / 3, 4 / 7]])
    masked = np.array([[0.0, -np.inf], [0.0, -np.inf]])  # colSums (2, 0): row 2 divided by 0, silently
    np.testing.assert_array_equal(mistakes._softmax_sums(E, 0, "F")(masked), [[0.5, 0.0], [np.inf, np.nan]])


def test_heads_joined_by_rows_interleaved_or_stacked_then_reshaped():
    heads = [np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0, 6.0], [7.0, 8.0]])]
    np.testing.assert_array_equal(mistakes._concat_by_rows(heads), [[1, 3, 2, 4], [5, 7, 6, 8]])
    np.testing.assert_array_equal(mistakes._concat_interleaved(heads), [[1, 5, 2, 6], [3, 7, 4, 8]])
    np.testing.assert_array_equal(mistakes._vstack_reshaped(heads), [[1, 2, 3, 4], [5, 6, 7, 8]])
    wide = [np.arange(6.0).reshape(2, 3), np.arange(6.0, 12.0).reshape(2, 3)]  # n = 2 rows, d_v = 3
    np.testing.assert_array_equal(mistakes._concat_by_rows(wide), [[0, 3, 1, 4, 2, 5], [6, 9, 7, 10, 8, 11]])
    np.testing.assert_array_equal(mistakes._concat_interleaved(wide), [[0, 6, 1, 7, 2, 8], [3, 9, 4, 10, 5, 11]])


def test_the_future_is_strictly_above_the_diagonal():
    np.testing.assert_array_equal(mistakes._future(3), [[False, True, True], [False, False, True],
                                                        [False, False, False]])


def test_r_crossprod_of_k_and_q_is_kt_q_scaled():
    Q, K = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    np.testing.assert_allclose(mistakes._KtQ().scaled_scores(Q, K), K.T @ Q / math.sqrt(2))
    np.testing.assert_allclose(mistakes._KtQ(scale=lambda d_k, d_model: 1.0).scaled_scores(Q, K), K.T @ Q)
    by_d_model = mistakes._KtQ(scale=mistakes._sqrt_d_model)
    np.testing.assert_allclose(by_d_model.scaled_scores(Q, K, d_model=9), K.T @ Q / 3.0)


def test_a_variant_that_cannot_say_anything_leaves_the_later_ones_to_explain():
    rng = np.random.default_rng(4)
    Q, K = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    expected = reference.scaled_scores(Q, K)
    # without d_model, wrong-scale's √d_model variant cannot run; scores-transposed comes after it
    assert mistakes.explaining("scaled_scores", (Q, K), {}, expected.T, expected, 1e-9) == {"scores-transposed"}


def test_the_scale_by_d_model_applies_only_where_d_model_is_known():
    with pytest.raises(mistakes.NotApplicable):
        mistakes._sqrt_d_model(4, None)
    assert mistakes._sqrt_d_model(4, 9) == 3.0


@pytest.mark.parametrize("mistake, got", [
    ("loop-skips-last-row", lambda S: S.copy()),  # one row left as scores: only R's 1:n-1 does that
    ("softmax-transposed", lambda S: np.ones(2)),  # apply(S, 1, f) on a one-column matrix: a vector
])
def test_r_idioms_are_evidence_where_no_python_variant_explains_the_result(mistake, got):
    S = np.array([[0.0, LN3]]) if mistake == "loop-skips-last-row" else np.array([[2.0], [-1.0]])
    expected = reference.softmax(S)
    assert mistakes.explaining("softmax", (S,), {}, got(S), expected, 1e-9) == {mistake}


def test_d_model_reaches_the_scale_from_every_function_that_knows_it():
    """The √d_model variant of wrong-scale divides by √d_model only where d_model is passed down to the scores."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((3, 9))  # d_model = 9
    W_Q, W_K, W_V = ([rng.standard_normal((9, 4)) for _ in range(2)] for _ in range(3))  # d_k = d_v = 4
    W_O = rng.standard_normal((8, 9))
    by_d_model = next(v for m, v in mistakes.VARIANTS if m == "wrong-scale" and v.scale is mistakes._sqrt_d_model)
    Q, K, V = X @ W_Q[0], X @ W_K[0], X @ W_V[0]
    S = Q @ K.T / 3.0  # ÷ √9, not ÷ √4
    A = reference.softmax(S + reference.causal_mask(3))
    np.testing.assert_allclose(by_d_model.attention_weights(Q, K, d_model=9), A)
    np.testing.assert_allclose(by_d_model.attention_head(Q, K, V, d_model=9), A @ V)
    heads = [reference.softmax((X @ q) @ (X @ k).T / 3.0 + reference.causal_mask(3)) @ (X @ v)
             for q, k, v in zip(W_Q, W_K, W_V, strict=True)]
    np.testing.assert_allclose(by_d_model.multi_head_attention(X, W_Q, W_K, W_V, W_O),
                               np.concatenate(heads, axis=1) @ W_O)


def test_the_elementwise_and_crossed_products_are_scaled_by_the_square_root_of_d_k():
    Q, K = np.arange(1.0, 9.0).reshape(2, 4), np.full((2, 4), 2.0)  # d_k = 4
    elementwise = next(v for m, v in mistakes.VARIANTS if m == "elementwise-product")
    np.testing.assert_allclose(elementwise.scaled_scores(Q, K), Q * K / 2.0)
    crossed = next(v for m, v in mistakes.VARIANTS if m == "scores-crossprod")
    np.testing.assert_allclose(crossed.scaled_scores(Q, K), Q.T @ K / 2.0)
