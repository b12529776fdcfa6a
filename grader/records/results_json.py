"""One hand-in's results as Gradescope's results.json: the writer (``payload``, which
``grader.results.GradeResult.to_gradescope`` is) and its reader (``read``) side by side.

The batch writes one per student (``grades_results/<stem>.json``), the Gradescope bundle writes
``/autograder/results/results.json``, ``--json`` writes one file's; the class page reads the batch's back. What is
read back is read as data from a file an instructor may have edited: one that is not such a file is a ValueError
naming it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# Gradescope renders "output" as this format; "text" shows it as written, so nothing a submission printed
# (HTML, Markdown, ANSI) is rendered. Set on every test too, where a test's own format would win.
OUTPUT_FORMAT = "text"
LANGUAGES = ("python", "r")  # a hand-in's language, as the file says it; anything else is read as python


def test_payload(test, number: str = "") -> dict:
    """Gradescope's test object of a ``grader.results.TestResult``; ``number`` orders it ("3.2": the third
    function's second test), ``tags`` are the mistakes named (Gradescope filters its statistics by them)."""
    return {
        "name": test.name,
        "number": number,
        "score": test.score,
        "max_score": test.max_score,
        "status": "passed" if test.passed else "failed",
        "output": test.feedback,
        "output_format": OUTPUT_FORMAT,
        "tags": list(test.mistakes),
        "visibility": test.visibility,
        "extra_data": {"function": test.function, "group": test.group, "mistakes": list(test.mistakes)},
    }


def payload(result) -> dict:
    """The whole results.json of a ``grader.results.GradeResult``."""
    return {
        "score": result.score,
        "execution_time": round(result.execution_time, 3),
        "output": "\n\n".join(result.notes + [result.mistake_line()]).strip(),
        "output_format": OUTPUT_FORMAT,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [test_payload(t, number) for t, number in zip(result.tests, result.numbers(), strict=True)],
        # A secret seed never goes into a file a student may see: only whether the public one was used.
        "extra_data": {"mistakes": result.mistakes, "public_seed": result.public_seed,
                       "max_score": result.max_score, "timed_out": result.ran_out_of_time,
                       "language": result.language},
    }


@dataclass(frozen=True)
class TestRow:
    """One test as the file holds it."""

    function: str
    group: str
    name: str  # as the student read it, e.g. "softmax: hidden cases"
    passed: bool
    output: str
    mistakes: tuple[str, ...]


@dataclass(frozen=True)
class ResultsJson:
    """What a reader of a results.json needs: its tests, whether some call or the import ran out of time, and the
    hand-in's language."""

    tests: tuple[TestRow, ...]
    timed_out: bool
    language: str  # python | r: the notation its reader reads


def read(path: Path) -> ResultsJson:
    """The results.json at ``path``; a ValueError naming it when it is not one the grader wrote."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        tests = tuple(TestRow(t["extra_data"]["function"], t["extra_data"]["group"], t["name"],
                              t["status"] == "passed", t.get("output", ""), tuple(t["extra_data"].get("mistakes", ())))
                      for t in raw.get("tests", []))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a results JSON the batch wrote ({type(exc).__name__}: {exc})") from None
    extra = raw.get("extra_data", {})
    language = extra.get("language") if extra.get("language") in LANGUAGES else "python"
    return ResultsJson(tests, bool(extra.get("timed_out", False)), language)
