"""The exports' view of a batch's rows: the gradebook's LMS columns, one mapping; the folder of pages."""

from __future__ import annotations

from pathlib import Path

from grader.batch import Row
from grader.intake.finding import Entry
from grader.lms.exports import FeedbackFolder, from_rows
from grader.lms.identity import PLAIN
from grader.results import GradeResult


def _result(name: str) -> GradeResult:
    return GradeResult(student=name, tests=[], lang="en", seed=1, status="refused", reason="empty file")


def test_an_export_reads_a_rows_lms_as_the_gradebook_writes_it_with_or_without_an_entry():
    moodle = Entry(student="Ana", label="Ana_1874501_assignsubmission_file_", paths=(Path("x"),), layout="moodle",
                   lms_id="1874501", display="Ana Conceição", identity="moodle:1874501")
    rows = [Row("Ana", _result("Ana"), entry=moodle, stem="ana"), Row("Zé", None, error="boom", stem="ze")]
    for row, graded in zip(rows, from_rows(rows), strict=True):
        written = row.to_dict(30.0)
        assert (graded.lms, graded.lms_id, graded.lms_name) == (written["lms"], written["lms_id"], written["lms_name"])
    assert [g.lms for g in from_rows(rows)] == ["moodle", PLAIN]


def test_the_folder_has_a_page_per_graded_row_named_by_its_stem(tmp_path):
    rows = from_rows([Row("Ana", _result("Ana"), stem="ana"), Row("Zé", None, error="boom", stem="ze")])
    export = FeedbackFolder(tmp_path / "pages")
    assert export.write(rows, 10.0) == 1
    assert [p.name for p in export.path.iterdir()] == ["ana.html"]
