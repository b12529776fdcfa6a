"""Grade one submission: run every case in the sandbox, judge it in the parent, collect the results."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from grader import rubric as rubric_mod
from grader.cases import DEFAULT_SEED, FUNCTIONS, Case, all_cases
from grader.checks import case_label, check, describe_exit, where_text
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


def grade(path: str | Path, config: GradeConfig = GradeConfig(), student: str | None = None) -> GradeResult:
    start = time.perf_counter()
    path = Path(path)
    lang, limits = config.lang, config.limits
    rubric = config.rubric or rubric_mod.load()
    by_test: dict[tuple[str, str], list[Case]] = {}
    for case in all_cases(config.seed):
        by_test.setdefault((case.function, case.group), []).append(case)

    notes: list[str] = []
    tests: list[TestResult] = []
    with Sandbox(path, list(FUNCTIONS), limits) as box:
        load = box.start()
        load_failure = None if load.status == "ok" else _load_message(load, lang, limits)
        if load_failure:
            notes.append(load_failure)
        stopped: set[str] = set()
        for function, group, points in rubric.tests():
            name = text(lang, f"test.{group}", function=function)
            if load_failure:
                tests.append(TestResult(name, function, group, points, False, load_failure))
            elif function not in load.functions:
                tests.append(TestResult(name, function, group, points, False, text(lang, "detail.missing", function=function)))
            elif function in stopped:
                tests.append(TestResult(name, function, group, points, False, text(lang, "detail.skipped")))
            else:
                result, stop = _run_test(box, name, function, group, points, by_test.get((function, group), []), lang, limits)
                tests.append(result)
                if stop:
                    stopped.add(function)
        if box.captured.total:
            shown = box.captured.text()[:OUTPUT_SHOWN]
            notes.append(text(lang, "load.output", total=box.captured.total, kept=len(shown)) + "\n" + shown)
    student = student or path.stem
    return GradeResult(student, tests, lang, config.seed, time.perf_counter() - start, notes)


def _run_test(box: Sandbox, name, function, group, points, cases, lang, limits) -> tuple[TestResult, bool]:
    first_failure = None
    failed = 0
    found: list[str] = []
    stop = False
    for i, case in enumerate(cases):
        verdict = check(case, box.call(function, list(case.args), dict(case.kwargs)), lang, limits)
        found += [m for m in verdict.mistakes if m not in found]
        if not verdict.passed:
            failed += 1
            if first_failure is None:
                first_failure = f"{case_label(case, lang)}: {verdict.detail}"
                first_mistakes = set(verdict.mistakes)
        if verdict.stop:
            failed += len(cases) - i - 1
            stop = True
            break
    if first_failure is None:
        key = "pass.worked" if group == "worked" else "pass.cases"
        return TestResult(name, function, group, points, True, text(lang, key, count=len(cases))), stop
    feedback = [first_failure]
    if len(cases) > 1:
        feedback.append(text(lang, "fail.count", failed=failed, count=len(cases)))
    feedback += [f"[{m}] {text(lang, 'mistake.' + m)}" for m in found if m not in first_mistakes]
    ordered = tuple(m for m in MISTAKE_IDS if m in found)
    return TestResult(name, function, group, points, False, " ".join(feedback), ordered), stop


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
