"""The class in numbers: the distribution of totals, pass rates, misconceptions and who needs attention.

Every figure of the page is computed here, as data; ``render`` words it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from grader.classpage.gradebook import Student
from grader.functions.contract import FUNCTIONS
from grader.grade_status import NOT_GRADED, GradeStatus
from grader.messages import CATALOG
from grader.module.contract import MODULE_NAMES
from grader.results import NAMED_MISTAKES

BINS = 10  # the histogram's bars over [0, the most points]
_NUMBER = re.compile(r"[−-]?\d+(?:[.,]\d+)*(?:e[−+-]?\d+)?")


@dataclass(frozen=True)
class Distribution:
    totals: list[float]
    max_total: float
    median: float
    q1: float
    q3: float
    mean: float
    edges: list[float]  # BINS + 1 edges from 0 to max_total
    counts: list[int]  # students per bar; the last bar includes its right edge


def distribution(students: list[Student]) -> Distribution:
    totals = [s.total for s in students]
    top = max((s.max_total for s in students), default=0.0) or max(totals, default=0.0) or 1.0
    edges = np.linspace(0.0, top, BINS + 1)
    counts, _ = np.histogram(np.clip(totals, 0.0, top), bins=edges)
    q1, median, q3 = (float(v) for v in np.percentile(totals, [25, 50, 75])) if totals else (0.0, 0.0, 0.0)
    return Distribution(totals, float(top), median, q1, q3, float(np.mean(totals)) if totals else 0.0,
                        [float(e) for e in edges], [int(c) for c in counts])


@dataclass(frozen=True)
class PassRate:
    item: str  # a function (question 1) or a test's name (question 2's checks)
    passed: int
    count: int  # students in the gradebook: one not graded passes nothing

    @property
    def share(self) -> float:
        return self.passed / self.count if self.count else 0.0


def _item(test) -> str:
    """What a pass rate is of: the function for question 1, the check (the test's name) for question 2."""
    return test.name if test.function in MODULE_NAMES else test.function


def pass_rates(students: list[Student]) -> list[PassRate]:
    """Per function (or per check): how many students passed every test of it, in the course's order."""
    passed: dict[str, int] = {}
    for s in students:
        by_item: dict[str, bool] = {}
        for t in s.tests:
            by_item[_item(t)] = by_item.get(_item(t), True) and t.passed
        if not s.tests:  # no results JSON: the gradebook's points say full marks or not
            by_item = {f: 0 < s.points.get(f, 0.0) >= _column_max(students, f) for f in _graded(students)}
        for item, ok in by_item.items():
            passed[item] = passed.get(item, 0) + ok
    order = {name: i for i, name in enumerate((*FUNCTIONS, *MODULE_NAMES))}
    items = sorted(passed, key=lambda item: (order.get(item.split(":")[0], len(order)), _first_seen(students, item)))
    return [PassRate(item, passed[item], len(students)) for item in items]


def _graded(students: list[Student]) -> list[str]:
    return [f for f in (*FUNCTIONS, *MODULE_NAMES) if _column_max(students, f) > 0]


def _column_max(students: list[Student], function: str) -> float:
    return max((s.points.get(function, 0.0) for s in students), default=0.0)


def _first_seen(students: list[Student], item: str) -> int:
    for s in students:
        for i, t in enumerate(s.tests):
            if _item(t) == item:
                return i
    return 0


@dataclass(frozen=True)
class Misconception:
    mistake: str  # an id of NAMED_MISTAKES
    students: list[str]


def misconceptions(students: list[Student]) -> list[Misconception]:
    """Each named mistake with the students who made it, most frequent first (the course's order on ties)."""
    who: dict[str, list[str]] = defaultdict(list)
    for s in students:
        for m in s.mistakes:
            who[m].append(s.name)
    order = {m: i for i, m in enumerate(NAMED_MISTAKES)}
    ranked = sorted(who, key=lambda m: (-len(who[m]), order.get(m, len(order)), m))
    return [Misconception(m, who[m]) for m in ranked]


@dataclass(frozen=True)
class UnnamedFailure:
    function: str
    message: str  # the first line of the first such failure, as the student read it
    students: list[str]


def _worded(keys: list[str]) -> str:
    """A pattern matching the catalog's texts of ``keys`` in every language, any value in each placeholder."""
    texts = [template for key in keys for template in CATALOG.entries[key].values()]
    patterns = [".+?".join(re.escape(part) for part in re.split(r"\{[^}]*\}", t)) for t in texts]
    return "|".join(sorted(patterns, key=len, reverse=True))


# Every case label a test's feedback may start with ("Hidden case with n=5, d_k=3: "): it says which case,
# the rest what went wrong.
CASE_LABEL = re.compile(f"^(?:{_worded([k for k in CATALOG.entries if k.split('.')[0] in ('case', 'case_r')])}): ")
# A function that fails only through a helper's failure: explained by the helper's row, not a failure of its own
BECAUSE_HELPER = re.compile(f"^(?:{_worded(['detail.because_helper'])})")


def first_line(output: str) -> str:
    """What went wrong, as the student read it: the feedback's first sentence, without the case's label."""
    line = CASE_LABEL.sub("", output.strip().split("\n", 1)[0], count=1)
    end = re.search(r"[.?!] ", line)
    return line[: end.start() + 1] if end else line


def unnamed_failures(students: list[Student]) -> list[UnnamedFailure]:
    """Failures no named mistake explains, grouped by function and by their first line with the numbers
    left out (each student's hidden cases have sizes of their own), most frequent first. A function failing
    only because a helper does is left out: the helper's own failure (or mistake) is listed; so is every
    failure of a function where the grader named a mistake for that student (it is under the mistakes)."""
    groups: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for s in students:
        if s.status != GradeStatus.GRADED:
            continue  # not graded: listed under attention
        seen = set()
        named = {t.function for t in s.tests if t.mistakes}  # a named mistake explains its function's every failure
        for t in s.tests:
            if t.passed or t.mistakes or t.function in named:
                continue
            line = first_line(t.output)
            if BECAUSE_HELPER.match(line):
                continue
            key = (t.function, _NUMBER.sub("#", line))
            if key in seen:
                continue
            seen.add(key)
            groups.setdefault(key, (line, []))[1].append(s.name)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1][1]), kv[0]))
    return [UnnamedFailure(function, line, names) for (function, _), (line, names) in ranked]


@dataclass(frozen=True)
class SharedFailures:
    """Two students whose failing tests are the same tests, each told the same thing: further evidence beside a
    close pair, never a score."""

    tests: int  # how many tests fail for both
    same_values: bool  # and with the very same numbers (the same wrong values on the same cases)


def failure_pattern(student: Student) -> dict[tuple[str, str], str]:
    """Each failing test (function, name) with the first line the student read."""
    return {(t.function, t.name): first_line(t.output) for t in student.tests if not t.passed}


def shared_failures(a: Student, b: Student) -> SharedFailures | None:
    """The pattern two students share when their failing tests and what each was told are the same, else None."""
    first, second = failure_pattern(a), failure_pattern(b)
    if not first or first.keys() != second.keys():
        return None
    if any(_NUMBER.sub("#", first[k]) != _NUMBER.sub("#", second[k]) for k in first):
        return None
    return SharedFailures(len(first), all(first[k] == second[k] for k in first))


# Why a student needs attention, in the order the page lists them
REASONS = (*NOT_GRADED, "timed out", "zero", "late", "lookalike")


@dataclass(frozen=True)
class Attention:
    student: str
    reasons: tuple[str, ...]  # of REASONS
    detail: str  # the gradebook's reason (why not graded), if any
    total: float
    lookalike: str = ""  # the students whose names look the same (the gradebook's lookalike column), if any


def attention(students: list[Student]) -> list[Attention]:
    found = []
    for s in students:
        reasons = [s.status] if s.status in NOT_GRADED else []
        reasons += ["timed out"] * s.timed_out + ["zero"] * (s.total == 0) + ["late"] * s.late
        reasons += ["lookalike"] * bool(s.lookalike)
        if reasons:
            found.append(Attention(s.name, tuple(reasons), s.reason, s.total, s.lookalike))
    return sorted(found, key=lambda a: (min(REASONS.index(r) for r in a.reasons), a.student.lower()))


def reason_counts(found: list[Attention]) -> Counter:
    return Counter(r for a in found for r in a.reasons)
