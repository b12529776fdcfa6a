"""Attribution across functions: a function that fails only because it calls the student's own failing
helper is told so ("fails because your softmax does") instead of repeating that helper's failure.

Evidence, not source: each failing case is run again in the sandbox with the failing helpers standing in
for the student's. The reference never goes into the sandbox: during such a call, each time the student's
function calls one of those helpers, the child sends the arguments here (``Sandbox.call(helpers=...)``) and
``ReferenceHelpers`` computes the reference's value in the grader, within caps on what it accepts. When one
helper alone, else all of them together, makes every failing case pass, the function's own code is right.

What the child learns this way is the helpers' values at arguments it chose, which a right helper of its own
would compute: nothing of the secret, the case generator or the expected answers of other cases. It runs
after every graded call of the submission, so it can change only the wording of a verdict, never a point.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from grader.functions.cases import Case
from grader.functions.checks import check
from grader.messages import Message
from grader.results import TestVerdict
from grader.sandbox.limits import Limits
from grader.sandbox.session import HelperRefused, Sandbox
from mha import reference

# Which of the seven functions each one may call, nearest first.
HELPERS = {
    "attention_weights": ("softmax", "causal_mask", "scaled_scores"),
    "attention_head": ("attention_weights", "softmax", "causal_mask", "scaled_scores"),
    "multi_head_attention": ("attention_head", "attention_weights", "softmax", "causal_mask", "scaled_scores",
                             "project"),
}
# Multiply-adds (as _work bounds them) the grader spends on one call's helper requests, at most: the largest
# case's helpers need under 300,000 in all; this leaves a student's function room to call its helpers on
# larger inputs, and still costs the grader only milliseconds.
HELPER_WORK = 20_000_000


class ReferenceHelpers:
    """The reference's ``names``, computed here for one call (``grader.sandbox.session.Helpers``).

    Arguments arrive decoded and capped in entries (``inside/wire.decode_values``); before computing, the
    work a request asks for is bounded (``_work``) and the call's total kept under HELPER_WORK."""

    def __init__(self, names: tuple[str, ...], work: int = HELPER_WORK):
        self.names = names
        self.work_left = work

    def answer(self, name: str, args: list, kwargs: dict) -> np.ndarray:
        work = _work(name, args, kwargs)
        if work > self.work_left:
            raise HelperRefused(f"the grader computes {name} on inputs this small only")
        self.work_left -= work
        try:
            return getattr(reference, name)(*args, **kwargs)
        except (ValueError, TypeError) as exc:  # what the reference says of arguments it cannot take
            raise HelperRefused(str(exc)) from None


def _work(name: str, args: list, kwargs: dict) -> int:
    """An upper bound on the multiply-adds of the reference's ``name`` on these arguments: every helper's
    products are at most (entries of its inputs) × (their largest dimension); causal_mask(n) makes n²."""
    values, arrays, ints = [*args, *kwargs.values()], [], []
    while values:
        value = values.pop()
        if isinstance(value, list):
            values.extend(value)
        elif isinstance(value, np.ndarray):
            arrays.append(value)
        elif type(value) is int:
            ints.append(abs(value))
    if name == "causal_mask":
        return max(ints, default=0) ** 2 + 1
    entries = sum(a.size for a in arrays)
    side = max((max(a.shape, default=1) for a in arrays), default=1)
    return entries * side + 1


def _passes_with(box: Sandbox, cases: list[Case], helpers: tuple[str, ...], limits: Limits, policy) -> bool:
    for case in cases:
        outcome = box.call(case.function, list(case.args), dict(case.kwargs), helpers=ReferenceHelpers(helpers))
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
