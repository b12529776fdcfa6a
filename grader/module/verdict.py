"""One check's verdict for question 2 (the module's checks and the whole model's), as data: cases run, cases failed,
the first failure (a case's label and what went wrong, as messages) and notes; worded at the end."""

from __future__ import annotations

from dataclasses import dataclass

from grader.messages import Message


@dataclass(frozen=True)
class CheckVerdict:
    """One check's verdict: cases run, cases failed, the first failure, notes."""

    cases: int
    failed: int = 0
    first_failure: tuple[Message | None, Message] | None = None
    notes: tuple[Message, ...] = ()


def passed(cases: int, notes=()) -> CheckVerdict:
    return CheckVerdict(cases, 0, None, tuple(notes))


def failed(cases: int, failures: int, detail: Message, label: Message | None = None, notes=()) -> CheckVerdict:
    """``failures`` of ``cases`` failed, the first (labelled ``label`` where the check has several kinds of case) for
    the reason ``detail``."""
    return CheckVerdict(cases, failures, (label, detail), tuple(notes))
