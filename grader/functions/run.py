"""Grade question 1 in a running sandbox: every function test of the rubric, case by case, then the diagnosis and
the attribution across functions."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from grader.functions import attribution
from grader.functions.cases import Case
from grader.functions.checks import CaseVerdict, case_label, check
from grader.functions.mistakes import Failure, diagnose
from grader.intake import HandIn
from grader.intake.explain import hint
from grader.messages import Message
from grader.results import TestVerdict
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status
from grader.sandbox.session import Sandbox


def grade_functions(box: Sandbox, load: Outcome, load_failed: bool, tests: list[tuple[str, str, float]],
                    cases: tuple[Case, ...], limits: Limits, policy, imports: tuple[str, ...],
                    handin: HandIn) -> list[TestVerdict]:
    """The verdicts of question 1's tests (``tests`` from the rubric, ``cases`` the student's), in order, mistakes
    named; a function that fails only through a failing helper of its own said so."""
    by_test: dict[tuple[str, str], list[Case]] = {}
    for case in cases:
        by_test.setdefault((case.function, case.group), []).append(case)
    runs: list[_TestRun] = []
    stopped: set[str] = set()
    for function, group, points in tests:
        run = _TestRun(function, group, points)
        runs.append(run)
        if load_failed:
            run.fail(Message("detail.load_failed"))
        elif function not in load.functions:
            run.fail(Message("detail.missing", {"function": function}))
        elif function in stopped:
            run.fail(Message("detail.skipped"))
        elif run.execute(box, by_test.get((function, group), []), limits, policy, imports, handin):
            stopped.add(function)
    named = diagnose([f for run in runs for f in run.failures])
    verdicts = [run.verdict(named.get(run.function, ())) for run in runs]
    if runs:
        verdicts = attribution.attribute(box, verdicts, {(r.function, r.group): r.failing for r in runs}, limits,
                                         policy)
    return verdicts


@dataclass
class _TestRun:
    """One test while it runs: the first failure, the notes, and the evidence each failing case leaves."""

    function: str
    group: str
    points: float
    cases: int = 0
    failed: int = 0
    first_failure: tuple[Message | None, Message] | None = None
    notes: list[Message] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    failing: list[Case] = field(default_factory=list)  # the cases that failed on a value or an error, for attribution

    def fail(self, message: Message) -> None:
        self.cases, self.failed = 1, 1
        self.first_failure = (None, message)

    def execute(self, box: Sandbox, cases: list[Case], limits: Limits, policy, imports: tuple[str, ...],
                handin: HandIn | None = None) -> bool:
        """Run the cases; True when a timeout or crash means this function's other tests are skipped. ``handin``:
        a notebook's error lines are said as its cell and line."""
        self.cases = len(cases)
        for i, case in enumerate(cases):
            outcome = box.call(self.function, list(case.args), dict(case.kwargs))
            advice = hint(outcome.error_type, outcome.error, imports) if outcome.status is Status.ERROR else None
            if advice is not None and advice.key not in {n.key for n in self.notes}:
                # CUDA asked for, input(), a data file, numpy's shapes: once, with the first failing case's values
                self.notes.append(advice)
            try:
                verdict = check(case, outcome, limits, policy)
                if handin is not None and handin.notebook:
                    verdict = replace(verdict, detail=_in_cell(verdict.detail, handin))
            except Exception as exc:  # noqa: BLE001 - a grader bug fails this case, never the whole run
                verdict = CaseVerdict(False, Message("detail.internal", {"error": f"{type(exc).__name__}: {exc}"}),
                                      failure=Failure(case.function, case.group))
            self.notes += [n for n in verdict.notes if n.key not in {m.key for m in self.notes}]
            if verdict.passed:
                continue
            self.failed += 1
            if self.first_failure is None:
                self.first_failure = (case_label(case), verdict.detail)
            if verdict.failure is not None:
                self.failures.append(verdict.failure)
                self.failing.append(case)
            if verdict.stop:
                self.failed += len(cases) - i - 1
                return True
        return False

    def verdict(self, mistakes: tuple[str, ...]) -> TestVerdict:
        failing = self.failed > 0
        return TestVerdict(self.function, self.group, self.points, self.cases, self.failed, self.first_failure,
                           tuple(self.notes), mistakes if failing else ())


def _in_cell(detail: Message | None, handin: HandIn) -> Message | None:
    """A detail naming a line of the sandbox's file (the notebook's cells one after another) with the cell and the
    line in it, as the student sees their notebook."""
    at = detail.values.get("where") if detail is not None else None
    if not isinstance(at, Message) or at.key != "detail.where":
        return detail
    cell, line = handin.place(at.values["line"])
    if cell is None:
        return detail
    return replace(detail, values={**detail.values, "where": Message("load.in_cell", {"cell": cell, "line": line})})
