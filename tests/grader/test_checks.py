"""One case's verdict as data: what was wrong, the notes, and the evidence, before any wording."""

import numpy as np

from grader.cases import all_cases
from grader.checks import Policy, check
from grader.messages import render
from grader.sandbox import Limits, Outcome

CASES = all_cases()


def first(function, group="hidden", **kwargs):
    return next(
        c for c in CASES
        if c.function == function and c.group == group and all(c.kwargs.get(k) == v for k, v in kwargs.items())
    )


def judge(case, value, dtype="float64", policy=None):
    policy = Policy() if policy is None else policy
    return check(case, Outcome("ok", value=np.asarray(value, dtype=float), dtype=dtype), Limits(), policy)


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
    assert "requires exactly −inf" in render("en", verdict.detail)


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
    assert render("en", verdict.detail) == f"expected shape {tuple(case.reference_output().shape)}, got (2,)."


def test_a_returned_tuple_is_called_a_tuple_not_numpy_text():
    case = first("attention_head")
    mixed = Outcome("error", error="ValueError: setting an array element with a sequence. "
                                   "The requested array has an inhomogeneous shape",
                    error_type="ValueError", stage="convert")
    verdict = check(case, mixed, Limits())
    assert verdict.detail.key == "detail.returned_mixed" and "inhomogeneous" not in render("en", verdict.detail)
    same = judge(case, np.stack([case.reference_output()] * 2), dtype="tuple")  # (out, out) converts to 3-D
    assert "you returned a tuple holding 2 items" in render("en", same.detail)
    none = check(case, Outcome("ok", value=np.array(np.nan), dtype="NoneType"), Limits())
    assert none.detail.key == "detail.returned_none"


def test_a_causal_false_failure_says_nothing_should_be_masked():
    case = first("attention_weights", causal=False)
    n = case.reference_output().shape[0]
    masked = case.reference_output() * np.tril(np.ones((n, n)))
    verdict = judge(case, masked / masked.sum(axis=1, keepdims=True))
    assert verdict.detail.key == "detail.should_not_mask_unmasked"
    assert "note.not_causal" in [m.key for m in verdict.notes]
    assert "causal=False" in render("pt", verdict.detail)
