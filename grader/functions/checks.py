"""One case's verdict: shape first, then values within the numeric policy, then what was wrong, as data.

``check`` returns a ``CaseVerdict`` of message keys and values (``grader.messages.Message``), never
text: the wording happens once, at the end, in the chosen language. What was wrong is said in terms a
student can act on (a shape, a row sum, an entry that should be masked, the type returned instead of a
matrix). For hidden cases it never shows an expected value; for the worked example it may, since those
numbers are published. Any failure of the student's code is a failed verdict, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from grader import tolerance
from grader.functions import mistakes
from grader.functions.cases import Case
from grader.messages import Arguments, Message, Shape
from grader.outcome_messages import describe, where
from grader.rubric import Policy
from grader.sandbox.limits import GIB, Limits
from grader.sandbox.outcome import Outcome, Status

# A finite mask value at or below this counts as masked: the Annotated Transformer fills -1e9,
# picoGPT -1e10, the UvA tutorial -9e15. After a softmax each gives exactly the weight −inf gives.
MASKED_AT = -1e9
_SOFTMAX_LIKE = ("softmax", "attention_weights")
_CONTAINERS = ("tuple", "list", "dict", "set")  # type names a result arrives as when it has no dtype
_DEFAULT_POLICY = Policy()  # frozen: one instance serves every default


@dataclass(frozen=True)
class CaseVerdict:
    passed: bool
    detail: Message | None = None  # what was wrong in this case
    notes: tuple[Message, ...] = ()  # said whether or not the case passed (float32, a finite mask)
    failure: mistakes.Failure | None = None  # the evidence a failing case leaves for the diagnosis
    stop: bool = False  # a timeout or crash: skip the function's remaining cases


def case_label(case: Case) -> Message:
    if case.group == "worked":
        return Message(case.label_key, dict(case.label))
    params = Arguments(tuple(case.label.items()))  # n=3, causal=True; R's n = 3, causal = TRUE
    return Message("case.large" if case.group == "large" else case.label_key, {"params": params})


def _entry(i: int, j: int) -> str:
    return f"({i + 1},{j + 1})"  # counted from 1, as the course counts rows and columns


def _num(x: float) -> float:
    """An entry as a number: the catalog's template writes it ({got:.4g}) in the reader's notation, at the end."""
    return float(x)


def _shape(shape: tuple) -> Shape:
    return Shape(tuple(int(s) for s in shape))  # (2,) for 1-D as Python writes it; R's "a vector of length 2"


def check(case: Case, outcome: Outcome, limits: Limits, policy: Policy = _DEFAULT_POLICY) -> CaseVerdict:
    """Judge one call of the student's function against the reference."""
    if outcome.status is Status.ERROR:  # worded here, with the case's evidence for the diagnosis
        return _error_verdict(case, outcome, limits)
    problem = describe(outcome, limits)
    if problem is not None:  # the child ended: the function's remaining cases are skipped
        return CaseVerdict(False, problem, stop=outcome.child_ended)
    return _value_verdict(case, outcome.value, outcome.dtype, policy)


def _error_verdict(case: Case, outcome: Outcome, limits: Limits) -> CaseVerdict:
    failure = mistakes.Failure(case.function, case.group)
    if outcome.stage == "convert":
        return CaseVerdict(False, _convert_message(case, outcome), failure=failure)
    if outcome.error_type == "NotImplementedError":
        return CaseVerdict(False, Message("detail.not_implemented"), failure=failure)
    if outcome.error_type == "MemoryError":
        detail = Message("detail.memory", {"limit": limits.memory_bytes / GIB, "where": where(outcome.line)})
        return CaseVerdict(False, detail, failure=failure)
    # math.exp on a plain float raises instead of returning inf
    overflowed = case.group == "large" and outcome.error_type in ("OverflowError", "FloatingPointError")
    detail = Message("detail.raised", {"error": outcome.error, "where": where(outcome.line)})
    return CaseVerdict(False, detail, failure=mistakes.Failure(case.function, case.group, overflowed=overflowed))


def _convert_message(case: Case, outcome: Outcome) -> Message:
    """The result could not become an array: say what was returned, not numpy's complaint."""
    expected = _shape(case.reference_output().shape)
    if outcome.dtype == "NULL":  # R's nothing (grader/sandbox/r_runner.R)
        return Message("detail.returned_null")
    kind = outcome.dtype if outcome.dtype in _CONTAINERS else ""
    if kind or "inhomogeneous" in outcome.error:
        return Message("detail.returned_mixed", {"kind": kind or "tuple/list", "expected": expected})
    return Message("detail.convert", {"error": outcome.error})


def _value_verdict(case: Case, got: np.ndarray, dtype: str, policy: Policy) -> CaseVerdict:
    expected = case.reference_output()
    notes: list[Message] = []
    if case.function == "causal_mask":
        got, note = _finite_mask_as_inf(got, policy)
        notes += [note] if note else []
    low = tolerance.precision(dtype)
    if low == "float32":  # accepted, and said so; lower precisions are explained only where they fail
        notes.append(Message("note.float32", {"dtype": dtype}))
    if tolerance.passes(got, expected, tolerance.floor(case.function, case.args, expected)):
        return CaseVerdict(True, notes=tuple(notes))  # a right answer: its condition need not be measured
    tol = tolerance.tolerance(case.function, case.args, case.kwargs, expected)
    if tolerance.passes(got, expected, tol):
        return CaseVerdict(True, notes=tuple(notes))
    if case.kwargs.get("causal") is False and _masked_anyway(case, got, tol):
        notes.append(Message("note.not_causal"))
    if got.shape != expected.shape:
        detail = _shape_message(got, expected, dtype)
    else:
        detail = _explain_values(case, got, expected, tol, policy)
        if low and low != "float32":  # float16: its precision is the cause when it explains the whole gap
            low_tol = tolerance.tolerance(case.function, case.args, case.kwargs, expected, low)
            if tolerance.passes(got, expected, low_tol):
                notes.append(Message("note.low_precision", {"dtype": dtype}))
    overflowed = (
        case.group == "large"
        and got.shape == expected.shape
        and bool(np.any(~np.isfinite(got) & np.isfinite(expected)))
    )
    explained = mistakes.explaining(case.function, case.args, case.kwargs, got, expected, tol)
    failure = mistakes.Failure(case.function, case.group, explained, overflowed)
    return CaseVerdict(False, detail, tuple(notes), failure)


def _masked_anyway(case: Case, got: np.ndarray, tol) -> bool:
    """The note on causal=False belongs only to a failure it explains: the result is the masked one."""
    masked = replace(case, kwargs={**case.kwargs, "causal": True}).reference_output()
    return got.shape == masked.shape and tolerance.passes(got, masked, tol)


def _finite_mask_as_inf(got: np.ndarray, policy: Policy) -> tuple[np.ndarray, Message | None]:
    """A mask's finite fill at or below MASKED_AT counts as −inf (unless the rubric requires −inf)."""
    finite_fill = np.isfinite(got) & (got <= MASKED_AT)
    if policy.require_inf_mask or not finite_fill.any():
        return got, None
    value = _num(float(got[finite_fill].flat[0]))
    return np.where(finite_fill, -np.inf, got), Message("note.finite_mask", {"value": value})


def _shape_message(got: np.ndarray, expected: np.ndarray, dtype: str) -> Message:
    shape = _shape(expected.shape)
    if dtype == "NoneType":
        return Message("detail.returned_none")
    if got.ndim == 0:
        return Message("detail.returned_scalar", {"kind": dtype or "number", "expected": shape})
    if dtype in _CONTAINERS and got.ndim > expected.ndim:
        return Message("detail.returned_container", {"kind": dtype, "count": got.shape[0], "expected": shape})
    key = "detail.shape_transposed" if got.ndim == 2 and got.shape == expected.shape[::-1] else "detail.shape"
    return Message(key, {"expected": shape, "got": _shape(got.shape)})


def _explain_values(case: Case, got: np.ndarray, expected: np.ndarray, tol: float, policy: Policy) -> Message:
    """The most useful single sentence about a right-shaped but wrong matrix."""
    n = got.shape[0] if got.ndim == 2 else 0
    future = np.triu(np.ones((n, n), dtype=bool), k=1) if got.ndim == 2 and got.shape[0] == got.shape[1] else None
    if case.function == "causal_mask" and future is not None:
        wrong = np.argwhere(future & ~np.isneginf(got))
        if len(wrong):
            i, j = wrong[0]
            needs_inf = policy.require_inf_mask and got[i, j] <= MASKED_AT
            key = "detail.mask_needs_inf" if needs_inf else "detail.should_mask_mask"
            return Message(key, {"entry": _entry(i, j), "got": _num(got[i, j])})
        wrong = np.argwhere(~future & (got != 0))
        if len(wrong):
            i, j = wrong[0]
            return Message("detail.should_not_mask_mask", {"entry": _entry(i, j), "got": _num(got[i, j])})
    bad_finite = ~np.isfinite(got) & np.isfinite(expected)
    if got.ndim == 2 and np.any(bad_finite):
        i, j = np.argwhere(bad_finite)[0]
        return Message("detail.not_finite", {"entry": _entry(i, j), "value": float(got[i, j])})
    if case.function == "attention_weights" and future is not None:
        zero = (np.abs(got) <= tol) & (expected > tol)
        if case.kwargs.get("causal", True):
            wrong = np.argwhere(future & (np.abs(got) > tol))
            if len(wrong):
                i, j = wrong[0]
                return Message(
                    "detail.should_mask_weight",
                    {"entry": _entry(i, j), "row": i + 1, "col": j + 1, "got": _num(got[i, j])},
                )
            wrong = np.argwhere(~future & zero)
            key = "detail.should_not_mask_weight"
        else:
            wrong = np.argwhere(zero)
            key = "detail.should_not_mask_unmasked"
        if len(wrong):
            i, j = wrong[0]
            return Message(key, {"entry": _entry(i, j), "row": i + 1, "col": j + 1})
    if case.function in _SOFTMAX_LIKE and got.ndim == 2:
        sums = got.sum(axis=1)
        off = np.argwhere(np.abs(sums - 1) > 1e-4)
        if len(off):
            row = int(off[0][0])
            return Message("detail.row_sum", {"row": row + 1, "total": float(sums[row])})
    wrong = ~tolerance.close(got, expected, tol)
    if not wrong.any():  # cannot happen for a failing case of the right shape; kept as a safe answer
        return Message("detail.values")
    idx = tuple(np.argwhere(wrong)[0])
    entry = "(" + ",".join(str(k + 1) for k in idx) + ")"
    values = {"wrong": int(wrong.sum()), "total": got.size, "entry": entry, "got": _num(got[idx])}
    if got.size == 1:  # "the only entry", never "1 of 1 entry is wrong; the first is"
        values = {"got": values["got"]}
        if case.group == "worked":
            return Message("detail.only_entry_worked", {**values, "want": _num(expected[idx])})
        return Message("detail.only_entry", values)
    if case.group == "worked":  # published numbers: showing the expected value teaches, and hides nothing
        return Message("detail.entries_worked", {**values, "want": _num(expected[idx])})
    return Message("detail.entries", values)
