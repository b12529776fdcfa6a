"""The gradebook CSV read back by its own reader as its writer wrote it."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.intake.finding import Entry
from grader.records import gradebook
from grader.results import GradeResult
from grader.results import TestResult as Verdict  # not collected as a test class


def _result(score: float, mistakes: tuple[str, ...] = ()) -> GradeResult:
    tests = [Verdict("softmax: hidden cases", "softmax", "hidden", score, True, ""),
             Verdict("softmax: worked example", "softmax", "worked", 2.0, False, "", mistakes)]
    return GradeResult("x", tests, "en", 1)


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text(gradebook.text(lines), encoding="utf-8")
    return path


def test_a_line_is_read_back_as_written_late_mistakes_points_and_lookalike(tmp_path):
    entry = Entry(student="Ana", label="a", paths=(Path("a"),), layout="canvas", lms_id="9100111", display="ana",
                  identity="canvas:9100111", lookalike="Аna")
    graded = gradebook.line("Ana", _result(3.0, ("missing-scale",)), 30.0, late=True, entry=entry)
    failed = gradebook.line("Zé", None, 30.0, error="boom")
    (ana, ze) = gradebook.read(_write(tmp_path / "g.csv", [graded, failed]))
    assert (ana.student, ana.total, ana.max_total, ana.status, ana.late) == ("Ana", 3.0, 5.0, "graded", True)
    assert ana.mistakes == ("missing-scale",) and ana.points["softmax"] == 3.0 and ana.lookalike == "Аna"
    assert (ze.total, ze.max_total, ze.status, ze.reason, ze.late, ze.mistakes) == (0.0, 30.0, "grader error", "boom",
                                                                                   False, ())
    assert set(ana.points) == set(gradebook.COLUMNS) - {*gradebook.NEEDED, "error", "lms", "lms_id", "lms_name",
                                                        "lookalike"}


@pytest.mark.parametrize("name", ["=HYPERLINK(\"x\")", "+1", "'=1", "\uff1dA1"])
def test_a_formula_looking_name_is_written_inert_and_read_back_as_it_was(tmp_path, name):
    path = _write(tmp_path / "g.csv", [gradebook.line(name, _result(1.0), 30.0)])
    assert "\n" + name not in path.read_text(encoding="utf-8")  # never at a cell's start
    (line,) = gradebook.read(path)
    assert line.student == name


def test_a_file_without_a_needed_column_is_refused_naming_it(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("student,total,max_total,mistakes,status,reason\nAna,1,2,,graded,\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"g\.csv is not a gradebook of this grader: no column late"):
        gradebook.read(path)


def test_a_total_that_is_no_number_is_refused_naming_the_line_and_the_column(tmp_path):
    path = _write(tmp_path / "g.csv", [gradebook.line("Ana", _result(1.0), 30.0)])
    path.write_text(path.read_text(encoding="utf-8").replace("Ana,1.0,", "Ana,um,"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: column total holds 'um', not a number"):
        gradebook.read(path)
