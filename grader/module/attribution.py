"""Attribution across functions: a function that fails only because it calls the student's own failing
helper is told so ("fails because your softmax does") instead of repeating that helper's failure.

Evidence, not source: each failing case is run again in the sandbox with the failing helpers replaced by
the reference's (``harness._grader_with_reference``); when one helper alone, else all of them together,
makes every failing case pass, the function's own code is right.
"""

from __future__ import annotations

from dataclasses import replace

from grader.cases import Case
from grader.checks import check
from grader.messages import Message
from grader.results import TestVerdict
from grader.sandbox.limits import Limits
from grader.sandbox.session import Sandbox

# Which of the seven functions each one may call, nearest first.
HELPERS = {
    "attention_weights": ("softmax", "causal_mask", "scaled_scores"),
    "attention_head": ("attention_weights", "softmax", "causal_mask", "scaled_scores"),
    "multi_head_attention": ("attention_head", "attention_weights", "softmax", "causal_mask", "scaled_scores",
                             "project"),
}


def _passes_with(box: Sandbox, cases: list[Case], helpers: tuple[str, ...], limits: Limits, policy) -> bool:
    for case in cases:
        flags = {f"call_{case.function}": True, **{f"use_{h}": True for h in helpers}}
        outcome = box.call("_grader_with_reference", list(case.args), {**case.kwargs, **flags})
        if not check(case, outcome, limits, policy).passed:
            return False
    return True


def attribute(box: Sandbox, verdicts: list[TestVerdict], failing: dict[tuple[str, str], list[Case]], limits: Limits,
              policy) -> list[TestVerdict]:
    """The verdicts, each failing one that its failing helpers alone explain reworded to say so; ``failing``
    holds each (function, group)'s failing cases."""
    failed_functions = {v.function for v in verdicts if not v.passed}
    out = []
    for verdict in verdicts:
        helpers = tuple(h for h in HELPERS.get(verdict.function, ()) if h in failed_functions)
        cases = failing.get((verdict.function, verdict.group), [])
        if verdict.passed or not helpers or not cases:
            out.append(verdict)
            continue
        tries = [(h,) for h in helpers] + ([helpers] if len(helpers) > 1 else [])
        because = next((t for t in tries if _passes_with(box, cases, t, limits, policy)), None)
        if because is None:
            out.append(verdict)
            continue
        label = verdict.first_failure[0] if verdict.first_failure else None
        detail = Message("detail.because_helper", {"helpers": ", ".join(because)})
        out.append(replace(verdict, first_failure=(label, detail), mistakes=()))
    return out
