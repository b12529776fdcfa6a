"""One case's verdict as data: what was wrong, the notes, and the evidence, before any wording."""

import signal

import numpy as np
import pytest

from grader import tolerance
from grader.functions.cases import Case, all_cases
from grader.functions.checks import CaseVerdict, case_label, check
from grader.functions.mistakes import Failure
from grader.messages import Message, Shape
from grader.outcome_messages import describe_exit, where
from grader.rubric import Policy
from grader.sandbox.limits import GIB, Limits
from grader.sandbox.outcome import Outcome, Status
from mha import reference

# Judging is silent: a numpy warning (inf - inf, 0/0) would reach the grader's output.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

CASES = all_cases()


def first(function, group="hidden", **kwargs):
    return next(
        c for c in CASES
        if c.function == function and c.group == group and all(c.kwargs.get(k) == v for k, v in kwargs.items())
    )


def largest(function, group="hidden", **kwargs):
    """The case of ``function`` with the most entries (the first hidden ones can be a single row)."""
    return max((c for c in CASES if c.function == function and c.group == group
                and all(c.kwargs.get(k) == v for k, v in kwargs.items())), key=lambda c: c.reference_output().size)


def judge(case, value, dtype="float64", policy=None):
    policy = Policy() if policy is None else policy
    return check(case, Outcome(Status.OK, value=np.asarray(value, dtype=float), dtype=dtype), Limits(), policy)


def test_a_finite_mask_at_or_below_minus_1e9_counts_as_masked_with_a_note():
    case = first("causal_mask", "worked")
    n = case.args[0]
    for fill in (-1e9, -1e10, -9e15):
        verdict = judge(case, np.triu(np.full((n, n), fill), k=1))
        assert verdict.passed and [m.key for m in verdict.notes] == ["note.finite_mask"]
    assert not judge(case, np.triu(np.full((n, n), -1e6), k=1)).passed  # not large enough to count
    ones = judge(case, np.triu(np.ones((n, n)), k=1))  # a 0/1 mask stays a mistake
    assert not ones.passed and "mask-not-additive" in ones.failure.explained_by


def test_the_rubric_can_require_minus_inf_exactly():
    case = first("causal_mask", "worked")
    n = case.args[0]
    verdict = judge(case, np.triu(np.full((n, n), -1e9), k=1), policy=Policy(require_inf_mask=True))
    assert not verdict.passed and verdict.detail.key == "detail.mask_needs_inf"
    assert "requires exactly −inf" in verdict.detail.text("en")


def test_float32_results_pass_with_a_note_and_float16_failures_name_the_precision():
    case = first("attention_head")
    expected = case.reference_output()
    f32 = judge(case, expected.astype(np.float32), dtype="torch.float32")
    assert f32.passed and [m.key for m in f32.notes] == ["note.float32"]
    f16 = judge(case, expected.astype(np.float16), dtype="float16")
    f16_notes = [m.key for m in f16.notes]
    assert not f16.passed and "note.low_precision" in f16_notes and "note.float32" not in f16_notes
    wrong32 = judge(case, expected.astype(np.float32) + 0.1, dtype="float32")
    assert "note.low_precision" not in [m.key for m in wrong32.notes]  # precision is not the cause there


def test_shapes_are_written_as_python_writes_them():
    case = first("project")
    verdict = judge(case, np.zeros(2))
    assert verdict.detail.text("en") == f"expected shape {tuple(case.reference_output().shape)}, got (2,)."


def test_a_returned_tuple_is_called_a_tuple_not_numpy_text():
    case = first("attention_head")
    mixed = Outcome(Status.ERROR, error="ValueError: setting an array element with a sequence. "
                                   "The requested array has an inhomogeneous shape",
                    error_type="ValueError", stage="convert")
    verdict = check(case, mixed, Limits())
    assert verdict.detail.key == "detail.returned_mixed" and "inhomogeneous" not in verdict.detail.text("en")
    same = judge(case, np.stack([case.reference_output()] * 2), dtype="tuple")  # (out, out) converts to 3-D
    assert "you returned a tuple holding 2 items" in same.detail.text("en")
    none = check(case, Outcome(Status.OK, value=np.array(np.nan), dtype="NoneType"), Limits())
    assert none.detail.key == "detail.returned_none"


def test_a_causal_false_failure_says_nothing_should_be_masked():
    case = first("attention_weights", causal=False)
    n = case.reference_output().shape[0]
    masked = case.reference_output() * np.tril(np.ones((n, n)))
    verdict = judge(case, masked / masked.sum(axis=1, keepdims=True))
    assert verdict.detail.key == "detail.should_not_mask_unmasked"
    assert "note.not_causal" in [m.key for m in verdict.notes]
    assert "causal=False" in verdict.detail.text("pt")


# Every verdict below is compared whole (passed, detail, notes, evidence, stop): a key or a value that
# changes is a different sentence for the student, or different evidence for the diagnosis.
LIMITS = Limits()


def failure(case, explained=frozenset(), overflowed=False):
    return Failure(case.function, case.group, frozenset(explained), overflowed)


def test_each_case_is_labelled_by_what_the_student_may_know_of_it():
    worked = first("project", "worked")
    assert case_label(worked).text("en") == "Worked example, X · W_Q[1]"
    assert case_label(worked).text("en", "r") == "Worked example, X %*% W_Q[[1]]"  # R's notation for an R hand-in
    hidden = first("project")
    assert case_label(hidden).text("en") == "Hidden case with n=1, d_model=3, d_k=2"
    assert case_label(hidden).text("pt", "r") == "Caso oculto com n = 1, d_model = 3, d_k = 2"
    large = first("softmax", "large")
    assert case_label(large).text("en") == "Case with scores of about ±1000, n=4, m=5"


@pytest.mark.parametrize("code, said", [
    (None, Message("code.exit", {"code": "?"})),
    (0, Message("code.exit", {"code": 0})),
    (3, Message("code.exit", {"code": 3})),
    (-signal.SIGSEGV, Message("code.signal", {"name": "SIGSEGV"})),
    (-signal.SIGXCPU, Message("code.cpu", {"seconds": LIMITS.cpu_seconds})),
    (-200, Message("code.signal", {"name": "200"})),  # no such signal: its number
])
def test_how_a_crash_is_described(code, said):
    assert describe_exit(code, LIMITS) == said


def test_where_names_a_line_only_when_there_is_one():
    assert where(7) == Message("detail.where", {"line": 7})
    assert where(None) == "" and where(0) == ""


@pytest.mark.parametrize("outcome, verdict", [
    (Outcome(Status.TIMEOUT),
     CaseVerdict(False, Message("detail.timeout", {"seconds": LIMITS.call_timeout}), stop=True)),
    (Outcome(Status.CRASH, exit_code=-signal.SIGSEGV),
     CaseVerdict(False, Message("detail.crash", {"code": Message("code.signal", {"name": "SIGSEGV"})}), stop=True)),
    (Outcome(Status.PROTOCOL), CaseVerdict(False, Message("detail.protocol"), stop=True)),
    (Outcome(Status.NOT_LOADED), CaseVerdict(False, Message("detail.not_loaded"), stop=True)),
    (Outcome(Status.TOO_BIG, error="10000000"),
     CaseVerdict(False, Message("detail.too_big", {"entries": 10_000_000, "limit": LIMITS.max_entries}))),
])
def test_a_call_that_did_not_return_fails_and_says_why(outcome, verdict):
    assert check(first("attention_head"), outcome, LIMITS) == verdict


def test_an_exception_fails_the_case_with_what_was_raised_and_where():
    case, large = first("softmax"), first("softmax", "large")
    raised = Outcome(Status.ERROR, error="ValueError: bad", error_type="ValueError", line=12, stage="call")
    assert check(case, raised, LIMITS) == CaseVerdict(
        False, Message("detail.raised", {"error": "ValueError: bad", "where": Message("detail.where", {"line": 12})}),
        failure=failure(case))
    todo = Outcome(Status.ERROR, error="NotImplementedError", error_type="NotImplementedError", stage="call")
    assert check(case, todo, LIMITS) == CaseVerdict(False, Message("detail.not_implemented"), failure=failure(case))
    memory = Outcome(Status.ERROR, error="MemoryError", error_type="MemoryError", stage="call")
    assert check(case, memory, LIMITS) == CaseVerdict(
        False, Message("detail.memory", {"limit": LIMITS.memory_bytes / GIB, "where": ""}), failure=failure(case))
    memory = Outcome(Status.ERROR, error="MemoryError", error_type="MemoryError", line=5, stage="call")
    assert check(case, memory, LIMITS).detail == Message(
        "detail.memory", {"limit": LIMITS.memory_bytes / GIB, "where": Message("detail.where", {"line": 5})})
    for error_type in ("OverflowError", "FloatingPointError"):  # math.exp raises instead of returning inf
        overflow = Outcome(Status.ERROR, error=f"{error_type}: x", error_type=error_type, stage="call")
        assert check(large, overflow, LIMITS).failure == failure(large, overflowed=True)
        assert check(case, overflow, LIMITS).failure == failure(case)  # only large scores overflow


def test_a_result_that_is_no_matrix_says_what_was_returned():
    case = largest("attention_head", causal=True)
    shape = Shape(case.reference_output().shape)
    convert = lambda error, dtype="": check(case, Outcome(Status.ERROR, error=error, error_type="ValueError",  # noqa: E731
                                                          stage="convert", dtype=dtype), LIMITS).detail
    assert convert("could not convert", "tuple") == Message("detail.returned_mixed",
                                                            {"kind": "tuple", "expected": shape})
    assert convert("inhomogeneous shape", "ndarray") == Message("detail.returned_mixed",
                                                                 {"kind": "tuple/list", "expected": shape})
    assert convert("could not convert string to float") == Message("detail.convert",
                                                                   {"error": "could not convert string to float"})
    whole = check(case, Outcome(Status.ERROR, error="x", error_type="TypeError", stage="convert", dtype="dict"), LIMITS)
    assert whole == CaseVerdict(False, Message("detail.returned_mixed", {"kind": "dict", "expected": shape}),
                                failure=failure(case))


def test_a_wrong_shape_is_said_in_the_terms_of_what_was_returned():
    case = largest("attention_head", causal=True)
    expected = case.reference_output()
    want = Shape(expected.shape)
    assert judge(case, 3.0, dtype="float").detail == Message("detail.returned_scalar", {"kind": "float",
                                                                                       "expected": want})
    assert judge(case, 3.0, dtype="").detail == Message("detail.returned_scalar", {"kind": "number", "expected": want})
    assert judge(case, expected.T, dtype="list").detail == Message("detail.shape_transposed", {
        "expected": want, "got": Shape(expected.T.shape)})
    assert judge(case, expected[:1], dtype="list").detail == Message("detail.shape", {
        "expected": want, "got": Shape(expected[:1].shape)})
    assert judge(case, np.zeros((2, 2, 2)), dtype="ndarray").detail == Message("detail.shape", {
        "expected": want, "got": Shape((2, 2, 2))})  # more dimensions, but no container: only the shape
    assert judge(case, np.zeros((2, 2, 2)), dtype="ndarray").detail.text("en").endswith(", got (2, 2, 2).")
    verdict = judge(case, expected[:1])
    assert verdict.failure == failure(case) and verdict.notes == ()


def test_a_mask_with_an_unmasked_future_or_a_masked_past_names_the_first_wrong_entry():
    case = first("causal_mask", "worked")
    n = case.args[0]
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    zeros = judge(case, np.zeros((n, n)))
    assert zeros.detail == Message("detail.should_mask_mask", {"entry": "(1,2)", "got": 0.0})
    past = np.where(future, -np.inf, 0.0)
    past[2, 1] = -5.0
    assert judge(case, past).detail == Message("detail.should_not_mask_mask", {"entry": "(3,2)", "got": -5.0})
    strict = judge(case, np.where(future, -1e9, 0.0), policy=Policy(require_inf_mask=True))
    assert strict.detail == Message("detail.mask_needs_inf", {"entry": "(1,2)", "got": -1e9})
    near = judge(case, np.where(future, -1e8, 0.0), policy=Policy(require_inf_mask=True))  # not even -1e9
    assert near.detail == Message("detail.should_mask_mask", {"entry": "(1,2)", "got": -1e8})
    lenient = judge(case, np.where(future, -1e12, 0.0))
    assert lenient == CaseVerdict(True, notes=(Message("note.finite_mask", {"value": -1e12}),))
    mixed = np.where(future, -1e10, 0.0)
    mixed[0, 1] = -1e9
    assert judge(case, mixed).notes == (Message("note.finite_mask", {"value": -1e9}),)  # the first one seen


def test_attention_weights_failures_name_the_entry_that_should_or_should_not_be_masked():
    case = first("attention_weights", "worked")
    expected = case.reference_output()
    n = expected.shape[0]
    Q, K = case.args
    unmasked = reference.softmax(reference.scaled_scores(Q, K))
    got = unmasked[0, 1]
    assert judge(case, unmasked).detail == Message("detail.should_mask_weight",
                                                   {"entry": "(1,2)", "row": 1, "col": 2, "got": got})
    blind = np.eye(n)  # every token attends only to itself: the past is masked too
    assert judge(case, blind).detail == Message("detail.should_not_mask_weight", {"entry": "(2,1)", "row": 2, "col": 1})


def test_non_finite_entries_and_rows_that_do_not_sum_to_one_are_named():
    case = largest("attention_head", causal=True)
    got = case.reference_output().copy()
    got[1, 0] = np.nan
    assert judge(case, got).detail.text("en") == "entry (2,1) is nan; every entry should be a finite number."
    assert judge(case, got).detail.text("en", "r") == "entry (2,1) is NaN; every entry should be a finite number."
    softmax_case = largest("softmax")
    doubled = 2 * softmax_case.reference_output()
    assert judge(softmax_case, doubled).detail == Message("detail.row_sum", {"row": 1, "total": pytest.approx(2)})
    halved = softmax_case.reference_output().copy()
    halved[-1] /= 2
    rows = halved.shape[0]
    assert judge(softmax_case, halved).detail == Message("detail.row_sum", {"row": rows, "total": pytest.approx(0.5)})


def test_wrong_entries_are_counted_and_only_the_worked_example_shows_the_expected_value():
    hidden = first("project")
    got = hidden.reference_output().copy()
    got[0, 1] += 1.0
    assert judge(hidden, got).detail == Message("detail.entries", {
        "wrong": 1, "total": got.size, "entry": "(1,2)", "got": got[0, 1]})
    worked = first("project", "worked")
    want = worked.reference_output()
    got = want.copy()
    got[2, 1] -= 3.0
    got[2, 0] -= 3.0
    assert judge(worked, got).detail == Message("detail.entries_worked", {
        "wrong": 2, "total": got.size, "entry": "(3,1)", "got": got[2, 0], "want": want[2, 0]})


def test_a_large_case_that_gives_inf_where_the_reference_is_finite_leaves_overflow_evidence():
    large = first("softmax", "large")
    got = large.reference_output().copy()
    got[0, 0] = np.inf
    assert judge(large, got).failure == failure(large, overflowed=True)
    hidden = first("softmax")
    got = hidden.reference_output().copy()
    got[0, 0] = np.inf
    assert judge(hidden, got).failure == failure(hidden)
    # the evidence carries the mistakes that explain the case
    scores = first("scaled_scores")
    verdict = judge(scores, reference.project(*scores.args[:1], np.eye(scores.args[0].shape[1])) @ scores.args[1].T)
    assert verdict.failure == failure(scores, {"missing-scale"})


def test_notes_say_whether_precision_or_a_non_causal_call_matters():
    case = first("attention_weights", causal=False)
    wrong = judge(case, np.full(case.reference_output().shape, 0.5), dtype="torch.float32")
    # 0.5 everywhere is not the masked result: the note on causal=False would not explain this failure
    assert wrong.notes == (Message("note.float32", {"dtype": "torch.float32"}),)
    causal = first("attention_weights")
    assert judge(causal, np.zeros(causal.reference_output().shape)).notes == ()


def test_a_call_without_causal_is_judged_as_causal_the_signatures_default():
    worked = first("attention_weights", "worked")
    Q, K = worked.args
    bare = Case("attention_weights", "hidden", (Q, K))  # no kwargs at all
    unmasked = reference.softmax(reference.scaled_scores(Q, K))
    assert judge(bare, unmasked).detail == Message("detail.should_mask_weight", {
        "entry": "(1,2)", "row": 1, "col": 2, "got": unmasked[0, 1]})


def test_a_square_softmax_is_not_judged_as_attention_weights():
    case = largest("softmax")
    n, m = case.reference_output().shape
    assert n == m  # square, and its upper triangle is not masked
    assert judge(case, np.ones((n, m))).detail == Message("detail.row_sum", {"row": 1, "total": pytest.approx(m)})


def test_more_whole_verdicts_precision_a_correct_mask_a_cpu_limit_and_a_large_failure_without_overflow():
    case = first("attention_head")
    f16 = judge(case, case.reference_output().astype(np.float16), dtype="float16")
    assert f16.notes == (Message("note.low_precision", {"dtype": "float16"}),)
    mask = first("causal_mask", "worked")
    assert judge(mask, reference.causal_mask(mask.args[0])) == CaseVerdict(True)
    cpu = check(case, Outcome(Status.CRASH, exit_code=-signal.SIGXCPU), LIMITS)
    assert cpu.detail == Message("detail.crash", {"code": Message("code.cpu", {"seconds": LIMITS.cpu_seconds})})
    large = first("softmax", "large")
    doubled = 2 * large.reference_output()
    doubled_sum = Message("detail.row_sum", {"row": 1, "total": pytest.approx(2)})
    assert judge(large, doubled) == CaseVerdict(False, doubled_sum, (), failure(large))


def test_r_null_is_said_to_be_null_not_a_conversion_error():
    case = first("softmax")
    null = Outcome(Status.ERROR, error="NULL", error_type="TypeError", stage="convert", dtype="NULL")
    assert check(case, null, LIMITS) == CaseVerdict(False, Message("detail.returned_null"), failure=failure(case))
    assert "NULL" in check(case, null, LIMITS).detail.text("pt")


def test_a_result_past_the_floor_but_within_the_cases_own_tolerance_passes():
    case = largest("softmax", "large")  # scores of ±1000: their condition widens the tolerance
    expected = case.reference_output()
    floor = tolerance.floor(case.function, case.args, expected)
    tol = tolerance.tolerance(case.function, case.args, case.kwargs, expected)
    assert tol > 2 * floor
    inside = np.where(np.isfinite(expected), expected + (floor + tol) / 2, expected)
    assert judge(case, inside) == CaseVerdict(True)
    float32 = CaseVerdict(True, notes=(Message("note.float32", {"dtype": "float32"}),))
    assert judge(case, inside, dtype="float32") == float32  # the note, whichever check passed it
    outside = np.where(np.isfinite(expected), expected + 2 * tol, expected)
    assert not judge(case, outside).passed


def test_a_causal_false_failure_that_is_not_the_masked_result_gets_no_note():
    case = largest("attention_weights", causal=False)
    reversed_rows = case.reference_output()[:, ::-1]  # each row sums to 1, nothing masked: simply wrong
    verdict = judge(case, reversed_rows)
    assert not verdict.passed and verdict.notes == ()


def test_rows_that_sum_to_one_but_are_wrong_are_counted_as_wrong_entries():
    case = largest("softmax")
    expected = case.reference_output()
    got = expected[:, ::-1]
    wrong = ~tolerance.close(got, expected, tolerance.tolerance(case.function, case.args, case.kwargs, expected))
    first_wrong = tuple(np.argwhere(wrong)[0])
    assert judge(case, got).detail == Message("detail.entries", {
        "wrong": int(wrong.sum()), "total": got.size, "entry": f"({first_wrong[0] + 1},{first_wrong[1] + 1})",
        "got": got[first_wrong]})


def test_the_only_entry_of_a_hidden_case_is_named_without_its_expected_value():
    case = next(c for c in CASES
                if c.function == "scaled_scores" and c.group == "hidden" and c.reference_output().size == 1)
    got = case.reference_output() + 1.0
    assert judge(case, got).detail == Message("detail.only_entry", {"got": got[0, 0]})
    assert judge(case, got).detail.text("en").startswith("its only entry is wrong (you returned ")


def test_the_floor_scales_with_the_result_so_a_small_result_gets_a_small_floor():
    rng = np.random.default_rng(6)
    Q, K, V = rng.standard_normal((3, 4, 2))
    case = Case("attention_head", "hidden", (Q, K, 1e-3 * V), {"causal": True})  # every entry near 1e-3
    expected = case.reference_output()
    tol = tolerance.tolerance(case.function, case.args, case.kwargs, expected)
    unscaled_floor = tolerance.FACTOR * np.sqrt(tolerance._inner(case.args)) * tolerance.EPS32  # scale 1
    assert 3 * tol < unscaled_floor  # what a floor blind to the result's size would let through
    assert not judge(case, expected + 3 * tol).passed


def test_the_only_entry_of_a_worked_case_is_shown_with_the_published_value():
    case = Case("scaled_scores", "worked", (np.array([[2.0, 1.0]]), np.array([[3.0, 0.0]])))  # S = 6 / √2
    want = case.reference_output()[0, 0]
    got = np.array([[7.0]])
    detail = judge(case, got).detail
    assert detail == Message("detail.only_entry_worked", {"got": 7.0, "want": want})
    assert detail.text("en") == f"its only entry is 7, but the worked example gives {want:.4g}."
