"""One case's verdict: shape first, then values in float64, then what to tell the student.

Feedback says what is wrong in terms a student can act on (a shape, a row sum, an entry that should
be masked). For hidden cases it never shows an expected value; for the worked example it may, since
those numbers are published. Any failure of the student's code is a failed verdict, never an error.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

import numpy as np

from grader import mistakes
from grader.cases import Case
from grader.messages import text
from grader.sandbox import GIB, Limits, Outcome

RTOL, ATOL = 1e-6, 1e-8
_SOFTMAX_LIKE = ("softmax", "attention_weights")


@dataclass(frozen=True)
class Verdict:
    passed: bool
    detail: str = ""  # rendered: what was wrong in this case
    mistakes: tuple[str, ...] = ()  # the known mistakes this output matches (several when the case cannot tell them apart)
    stop: bool = False  # a timeout or crash: skip the function's remaining cases


def case_label(case: Case, lang: str) -> str:
    if case.group == "worked":
        return text(lang, case.label_key, **case.label)
    params = ", ".join(f"{k}={v}" for k, v in case.label.items())
    key = "case.large" if case.group == "large" else case.label_key
    return text(lang, key, params=params)


def _entry(i: int, j: int) -> str:
    return f"({i + 1},{j + 1})"  # counted from 1, as the course counts rows and columns


def _num(x: float) -> str:
    return f"{x:.4g}"


def where_text(lang: str, line: int | None) -> str:
    return text(lang, "detail.where", line=line) if line else ""


def describe_exit(lang: str, code: int | None, limits: Limits) -> str:
    if code is None:
        return text(lang, "code.exit", code="?")
    if code < 0:
        if -code == signal.SIGXCPU:
            return text(lang, "code.cpu", seconds=limits.cpu_seconds)
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return text(lang, "code.signal", name=name)
    return text(lang, "code.exit", code=code)


def check(case: Case, outcome: Outcome, lang: str, limits: Limits) -> Verdict:
    """Judge one call of the student's function against the reference."""
    t = lambda key, **kw: text(lang, key, **kw)  # noqa: E731
    status = outcome.status
    if status == "timeout":
        return Verdict(False, t("detail.timeout", seconds=f"{limits.call_timeout:g}"), stop=True)
    if status == "crash":
        return Verdict(False, t("detail.crash", code=describe_exit(lang, outcome.exit_code, limits)), stop=True)
    if status == "protocol":
        return Verdict(False, t("detail.protocol"), stop=True)
    if status == "not_loaded":
        return Verdict(False, t("detail.not_loaded"), stop=True)
    if status == "too_big":
        return Verdict(False, t("detail.too_big", entries=outcome.error, limit=limits.max_entries))
    if status == "error":
        return _error_verdict(case, outcome, lang, limits)
    return _value_verdict(case, outcome.value, outcome.dtype, lang)


def _error_verdict(case: Case, outcome: Outcome, lang: str, limits: Limits) -> Verdict:
    t = lambda key, **kw: text(lang, key, **kw)  # noqa: E731
    where = where_text(lang, outcome.line)
    found: tuple[str, ...] = ()
    if outcome.stage == "convert":
        return Verdict(False, t("detail.convert", error=outcome.error))
    if outcome.error_type == "NotImplementedError":
        return Verdict(False, t("detail.not_implemented"))
    if outcome.error_type == "MemoryError":
        return Verdict(False, t("detail.memory", limit=f"{limits.memory_bytes / GIB:g}", where=where))
    if case.group == "large" and outcome.error_type in ("OverflowError", "FloatingPointError"):
        found = ("softmax-overflow",)  # math.exp on a plain float raises instead of returning inf
    return Verdict(False, t("detail.raised", error=outcome.error, where=where), found)


def _value_verdict(case: Case, got: np.ndarray, dtype: str, lang: str) -> Verdict:
    t = lambda key, **kw: text(lang, key, **kw)  # noqa: E731
    expected = case.reference_output()
    if got.shape == expected.shape and mistakes.matches(got, expected, RTOL, ATOL):
        return Verdict(True)
    found = mistakes.identify(case.function, case.args, case.kwargs, got, expected)
    if case.group == "large" and not found and got.shape == expected.shape:
        if np.any(~np.isfinite(got) & np.isfinite(expected)):
            found.append("softmax-overflow")
    if got.shape != expected.shape:
        detail = t("detail.shape", expected=_shape(expected.shape), got=_shape(got.shape))
        if got.ndim == 2 and got.shape == expected.shape[::-1]:
            detail += t("detail.shape_transposed")
    else:
        detail = _explain_values(case, got, expected, lang)
    if "float32" in dtype or "float16" in dtype:
        detail += t("detail.dtype", dtype=dtype)
    return Verdict(False, detail, tuple(found))


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _explain_values(case: Case, got: np.ndarray, expected: np.ndarray, lang: str) -> str:
    """The most useful single sentence about a right-shaped but wrong matrix."""
    t = lambda key, **kw: text(lang, key, **kw)  # noqa: E731
    if case.function == "causal_mask":
        n = got.shape[0]
        future = np.triu(np.ones((n, n), dtype=bool), k=1)
        wrong = np.argwhere(future & ~np.isneginf(got))
        if len(wrong):
            i, j = wrong[0]
            return t("detail.should_mask_mask", entry=_entry(i, j), got=_num(got[i, j]))
        wrong = np.argwhere(~future & (got != 0))
        if len(wrong):
            i, j = wrong[0]
            return t("detail.should_not_mask_mask", entry=_entry(i, j), got=_num(got[i, j]))
    bad_finite = ~np.isfinite(got) & np.isfinite(expected)
    if got.ndim == 2 and np.any(bad_finite):
        i, j = np.argwhere(bad_finite)[0]
        return t("detail.not_finite", entry=_entry(i, j), value=str(got[i, j]))
    causal = case.kwargs.get("causal", True)
    if case.function == "attention_weights" and causal and got.ndim == 2:
        n = got.shape[0]
        future = np.triu(np.ones((n, n), dtype=bool), k=1)
        wrong = np.argwhere(future & (np.abs(got) > ATOL))
        if len(wrong):
            i, j = wrong[0]
            return t("detail.should_mask_weight", entry=_entry(i, j), row=i + 1, col=j + 1, got=_num(got[i, j]))
        wrong = np.argwhere(~future & (np.abs(got) <= ATOL) & (expected > ATOL))
        if len(wrong):
            i, j = wrong[0]
            return t("detail.should_not_mask_weight", entry=_entry(i, j), row=i + 1, col=j + 1)
    if case.function in _SOFTMAX_LIKE and got.ndim == 2:
        sums = got.sum(axis=1)
        off = np.argwhere(np.abs(sums - 1) > 1e-6)
        if len(off):
            row = int(off[0][0])
            return t("detail.row_sum", row=row + 1, total=f"{sums[row]:.3g}")
    wrong = ~np.isclose(got, expected, rtol=RTOL, atol=ATOL)
    if not wrong.any():  # only the pattern of infinities differs, and no rule above caught it
        return t("detail.values")
    idx = tuple(np.argwhere(wrong)[0])
    entry = "(" + ",".join(str(k + 1) for k in idx) + ")"
    if case.group == "worked":  # published numbers: showing the expected value teaches, and hides nothing
        return t("detail.entries_worked", wrong=int(wrong.sum()), total=got.size, entry=entry, got=_num(got[idx]), want=_num(expected[idx]))
    return t("detail.entries", wrong=int(wrong.sum()), total=got.size, entry=entry, got=_num(got[idx]))


def explain(mistake_ids, lang: str) -> list[str]:
    """One sentence per known mistake, each starting with its identifier in brackets."""
    return [f"[{m}] {text(lang, 'mistake.' + m)}" for m in mistake_ids]
