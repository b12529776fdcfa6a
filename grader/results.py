"""Results as dataclasses; every score is computed here and nowhere else.

``TestVerdict`` is a test as judged (message keys and values); ``TestVerdict.word(lang)`` turns it into
the ``TestResult`` a student reads, once, at the end. ``GradeResult.to_gradescope()`` is Gradescope's
results.json (written and read back in ``grader.records.results_json``); ``table()`` is what the terminal shows.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from grader.functions.contract import FUNCTIONS, MISTAKE_IDS
from grader.grade_status import GradeStatus
from grader.messages import CATALOG, Message, mistake_named, notation_of, text
from grader.module.contract import MODEL_FUNCTION, MODULE_MISTAKE_IDS, MODULE_NAMES
from grader.records import results_json
from mha.messages import written

# Every mistake a result may name, in the course's order, each once (heads-concat-order is both questions').
NAMED_MISTAKES = tuple(dict.fromkeys(MISTAKE_IDS + MODULE_MISTAKE_IDS))
# The assignment's optional part (question 2's whole model): its points are extra, never in the maximum, so that the
# starter's stub left as it is costs nothing and every row of a class is out of the same total.
OPTIONAL = (MODEL_FUNCTION,)


def mistake_key(mistake: str, function: str, language: str = "python") -> str:
    """The catalog's explanation of ``mistake`` found at ``function``: in the hand-in's language's terms where the
    catalog has them (``mistake_r``: question 1 only), else question 1's own where a mistake of both questions is
    worded for each (``mistake_q1``: NumPy's heads, not PyTorch's (B, h, T, d_k)), else the one wording."""
    for key in (f"mistake_{language}.{mistake}", f"mistake_q1.{mistake}" if function in FUNCTIONS else ""):
        if key in CATALOG.entries:
            return key
    return f"mistake.{mistake}"


@dataclass(frozen=True)
class TestVerdict:
    """One test as judged, before any wording."""

    function: str
    group: str  # worked | hidden | large
    max_score: float
    cases: int
    failed: int
    first_failure: tuple[Message | None, Message] | None = None  # (which case, if any; what was wrong)
    notes: tuple[Message, ...] = ()  # each said once (float32 results, a finite mask, causal=False)
    mistakes: tuple[str, ...] = ()  # in NAMED_MISTAKES order
    language: str = "python"  # the hand-in's: an R one reads R's notation (grader.messages.NOTATIONS)

    @property
    def passed(self) -> bool:
        return self.failed == 0

    def word(self, lang: str, explained: frozenset[str] = frozenset()) -> TestResult:
        """The test as its student reads it, in the notation of their language. A mistake in ``explained`` was
        already explained at an earlier test of this function: it is named again, not explained again."""
        notation = notation_of(self.language)
        worded = lambda message: message.text(lang, notation)  # noqa: E731
        name = text(lang, f"test.{self.group}", function=self.function)
        if self.passed:
            worked = self.group == "worked"
            parts = [text(lang, "pass.worked") if worked else text(lang, "pass.cases", count=self.cases)]
        else:
            label, detail = self.first_failure
            parts = [f"{worded(label)}: {worded(detail)}" if label else worded(detail)]
            if self.cases > 1:
                parts.append(text(lang, "fail.count", failed=self.failed, count=self.cases))
        parts += [worded(note) for note in self.notes]
        differs = " ".join(parts)  # what this test alone says: its case and what came back
        for m in self.mistakes:
            title = Message(f"mistake_title.{m}")
            if m in explained:
                parts.append(worded(Message("result.mistake_again", {"id": m, "title": title})))
            else:
                parts.append(f"[{m}] {worded(title)}: {worded(Message(mistake_key(m, self.function, self.language)))}")
        return TestResult(name, self.function, self.group, self.max_score, self.passed, " ".join(parts), self.mistakes,
                          noted=bool(self.notes), differs=differs)


def word_tests(verdicts: list[TestVerdict], lang: str) -> list[TestResult]:
    """Every test worded, each mistake explained once per function: at the first of its tests that names it."""
    explained: dict[str, set[str]] = {}
    out = []
    for verdict in verdicts:
        seen = explained.setdefault(verdict.function, set())
        out.append(verdict.word(lang, frozenset(seen)))
        seen.update(verdict.mistakes)
    return out


@dataclass(frozen=True)
class TestResult:
    name: str  # starts with the function's name, e.g. "softmax: hidden cases"
    function: str
    group: str  # worked | hidden | large
    max_score: float
    passed: bool
    feedback: str
    mistakes: tuple[str, ...] = ()
    visibility: str = "visible"
    noted: bool = False  # the feedback carries a note worth showing even when the test passed
    differs: str = ""  # the feedback without the mistakes: the case and what came back (the feedback page's line)

    @property
    def score(self) -> float:
        # All or nothing per test: a test's cases pass together, so guessing one case earns nothing.
        return self.max_score if self.passed else 0.0

    def to_gradescope(self, number: str = "") -> dict:
        """Gradescope's test object (``grader.records.results_json.test_payload``)."""
        return results_json.test_payload(self, number)


@dataclass(frozen=True)
class GradeResult:
    student: str
    tests: list[TestResult]
    lang: str
    seed: int
    execution_time: float = 0.0
    notes: list[str] = field(default_factory=list)  # load errors, printed output: shown above the tests
    ran_out_of_time: bool = False  # the import or some call timed out (wall clock): the machine may have been busy
    public_seed: bool = False  # the hidden cases came from the public default seed (a self-check)
    status: GradeStatus = GradeStatus.GRADED  # the gradebook's status column
    reason: str = ""  # why not graded, in the language of the results (empty when graded)
    language: str = "python"  # the hand-in's (python | r): its reader's notation
    file: str = ""  # the graded file's name as the student named it ("" when none was read)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests if t.function not in OPTIONAL)

    def on_scale(self, out_of: float) -> float:
        """The total on an LMS's scale of ``out_of`` points, rounded to two decimals and never above ``out_of``
        (Moodle skips a grade above the assignment's maximum, which question 2's extra points could pass)."""
        if self.max_score <= 0:
            return 0.0
        return min(round(self.score / self.max_score * out_of, 2), out_of)

    @property
    def full_marks(self) -> bool:
        return all(t.passed for t in self.tests if t.function not in OPTIONAL)

    @property
    def mistakes(self) -> list[str]:
        found = {m for t in self.tests for m in t.mistakes}
        return [m for m in NAMED_MISTAKES if m in found]

    def points_by_function(self) -> dict[str, float]:
        return {f: sum(t.score for t in self.tests if t.function == f) for f in (*FUNCTIONS, *MODULE_NAMES)}

    def to_gradescope(self) -> dict:
        """Gradescope's results.json (``grader.records.results_json.payload``, beside its reader)."""
        return results_json.payload(self)

    def numbers(self) -> list[str]:
        """Each test's number, "function.test" in the order they appear (1-based)."""
        functions: dict[str, int] = {}
        within: dict[str, int] = {}
        out = []
        for t in self.tests:
            functions.setdefault(t.function, len(functions) + 1)
            within[t.function] = within.get(t.function, 0) + 1
            out.append(f"{functions[t.function]}.{within[t.function]}")
        return out

    def mistake_line(self) -> str:
        named = ", ".join(mistake_named(m).text(self.lang) for m in self.mistakes)
        return text(self.lang, "table.mistakes", ids=named) if self.mistakes else ""

    def table(self, width: int = 100) -> str:
        """A plain-text table: each test, its points, pass/fail, and the feedback under failures."""
        t = lambda key, **kw: text(self.lang, key, **kw)  # noqa: E731
        name_w = max(len(x.name) for x in self.tests) if self.tests else 10
        lines = list(self.notes)
        if lines:
            lines.append("")
        lines.append(f"{t('table.function'):<{name_w}}  {t('table.points'):>9}  {t('table.result')}")
        lines.append("-" * min(width, name_w + 22))
        for test in self.tests:
            mark = t("table.pass") if test.passed else t("table.fail")
            points = written(self.lang, f"{test.score:>4g} / {test.max_score:<3g}")
            lines.append(f"{test.name:<{name_w}}  {points}  {mark}")
            if not test.passed or test.noted:
                lines += textwrap.wrap(test.feedback, width=width, initial_indent="    ", subsequent_indent="    ")
        lines.append("-" * min(width, name_w + 22))
        lines.append(t("table.total", score=self.score, max_score=self.max_score))
        if self.mistakes:
            lines.append(self.mistake_line())
        return "\n".join(lines)
