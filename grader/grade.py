"""Grade one submission: run every case in the sandbox, judge it in the parent, collect the results."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from grader import rubric as rubric_mod
from grader.cases import DEFAULT_SEED, FUNCTIONS, Case, all_cases
from grader.checks import Verdict, case_label, check, describe_exit, explain, where_text
from grader.messages import text
from grader.mistakes import MISTAKE_IDS
from grader.results import GradeResult, TestResult
from grader.sandbox import Limits, Outcome, Sandbox

OUTPUT_SHOWN = 2000  # characters of the student's printed output repeated in the feedback


@dataclass(frozen=True)
class GradeConfig:
    seed: int = DEFAULT_SEED
    lang: str = "en"
    limits: Limits = field(default_factory=Limits)
    rubric: rubric_mod.Rubric | None = None  # None: the default rubric
    isolation: str = "namespaces"  # one of grader.isolation.MODES


def grade(path: str | Path, config: GradeConfig = GradeConfig(), student: str | None = None,
          spawner=None) -> GradeResult:
    """Grade one file; ``spawner`` is a batch's shared launcher (``grader.launch``), else one is made."""
    start = time.perf_counter()
    path = Path(path)
    lang, limits = config.lang, config.limits
    rubric = config.rubric or rubric_mod.load()
    by_test: dict[tuple[str, str], list[Case]] = {}
    for case in all_cases(config.seed):
        by_test.setdefault((case.function, case.group), []).append(case)

    notes: list[str] = []
    runs: list[_TestRun] = []
    with Sandbox(path, list(FUNCTIONS), limits, spawner=spawner, isolation=config.isolation) as box:
        load = box.start()
        load_failure = None if load.status == "ok" else _load_message(load, lang, limits)
        if load_failure:
            notes.append(load_failure)
        stopped: set[str] = set()
        for function, group, points in rubric.tests():
            run = _TestRun(text(lang, f"test.{group}", function=function), function, group, points)
            runs.append(run)
            if load_failure:
                run.fail(text(lang, "detail.load_failed"))
            elif function not in load.functions:
                run.fail(text(lang, "detail.missing", function=function))
            elif function in stopped:
                run.fail(text(lang, "detail.skipped"))
            elif run.execute(box, by_test.get((function, group), []), lang, limits):
                stopped.add(function)
        if box.captured.total:
            shown = box.captured.text()[:OUTPUT_SHOWN]
            notes.append(text(lang, "load.output", total=box.captured.total, kept=len(shown)) + "\n" + shown)
    tests = [run.result(lang) for run in _disambiguate(runs)]
    student = student or path.stem
    return GradeResult(student, tests, lang, config.seed, time.perf_counter() - start, notes)


@dataclass
class _TestRun:
    """One test while it runs: the first failure's text and the mistakes each failing case matched."""

    name: str
    function: str
    group: str
    points: float
    cases: int = 0
    failed: int = 0
    first_failure: str | None = None
    candidates: list[set[str]] = field(default_factory=list)  # one set per failing case that matched any
    mistakes: set[str] = field(default_factory=set)

    def fail(self, message: str) -> None:
        self.cases, self.failed, self.first_failure = 1, 1, message

    def execute(self, box: Sandbox, cases: list[Case], lang: str, limits: Limits) -> bool:
        """Run the cases; True when a timeout or crash means this function's other tests are skipped."""
        self.cases = len(cases)
        for i, case in enumerate(cases):
            outcome = box.call(self.function, list(case.args), dict(case.kwargs))
            try:
                verdict = check(case, outcome, lang, limits)
            except Exception as exc:  # noqa: BLE001 - a grader bug fails this case, never the whole run
                verdict = Verdict(False, text(lang, "detail.internal", error=f"{type(exc).__name__}: {exc}"))
            if verdict.passed:
                continue
            self.failed += 1
            if self.first_failure is None:
                self.first_failure = f"{case_label(case, lang)}: {verdict.detail}"
            if verdict.mistakes:
                self.candidates.append(set(verdict.mistakes))
            if verdict.stop:
                self.failed += len(cases) - i - 1
                return True
        # A mistake that every matching case agrees on; if the cases disagree (two mistakes), all of them.
        if self.candidates:
            self.mistakes = set.intersection(*self.candidates) or set.union(*self.candidates)
        return False

    def result(self, lang: str) -> TestResult:
        if self.first_failure is None:
            key = "pass.worked" if self.group == "worked" else "pass.cases"
            return TestResult(self.name, self.function, self.group, self.points, True, text(lang, key, count=self.cases))
        ordered = tuple(m for m in MISTAKE_IDS if m in self.mistakes)
        feedback = [self.first_failure]
        if self.cases > 1:
            feedback.append(text(lang, "fail.count", failed=self.failed, count=self.cases))
        feedback += explain(ordered, lang)
        return TestResult(self.name, self.function, self.group, self.points, False, " ".join(feedback), ordered)


def _disambiguate(runs: list[_TestRun]) -> list[_TestRun]:
    """Where a test's cases could not tell two mistakes apart (e.g. a 0/1 mask next to scores of ±1000
    looks like no mask at all), keep the ones that another test of the same submission pins down alone."""
    pinned = {m for run in runs if len(run.mistakes) == 1 for m in run.mistakes}
    for run in runs:
        if len(run.mistakes) > 1 and run.mistakes & pinned:
            run.mistakes &= pinned
    return runs


def _load_message(load: Outcome, lang: str, limits: Limits) -> str:
    if load.status == "timeout":
        return text(lang, "load.timeout", seconds=f"{limits.import_timeout:g}")
    if load.status == "crash":
        return text(lang, "load.crash", code=describe_exit(lang, load.exit_code, limits))
    if load.status == "protocol":
        return text(lang, "load.protocol")
    message = text(lang, "load.error", error=load.error, where=where_text(lang, load.line))
    if load.error_type in ("ImportError", "ModuleNotFoundError") and "belongs to the grader" in load.error:
        message += text(lang, "load.grader_import")
    return message
