"""Moodle's home: the feedback zip's folders are named as the download names them, read back by the same layout."""

from __future__ import annotations

import zipfile

import pytest

from grader.intake.layouts import BUILT_IN, parse
from grader.lms import moodle
from grader.lms.exports import Graded
from grader.results import GradeResult
from grader.results import TestResult as Verdict  # not collected as a test class


def _graded(student: str, lms: str, lms_id: str, score: float = 2.0) -> Graded:
    result = GradeResult(student, [Verdict("softmax: hidden cases", "softmax", "hidden", score, True, "")], "en", 1)
    return Graded(student, lms, lms_id, student, student.lower(), result)


@pytest.mark.parametrize("name", ["Ana Conceição", "Ana_Maria da Silva", "a/b", "  "])
def test_a_feedback_folder_is_read_back_by_moodles_download_layout_as_that_participants_file_submission(name):
    folder = moodle.folder_name(name, "1874501")
    named = parse(folder, True, BUILT_IN)
    assert (named.lms, named.lms_id, named.not_submission) == (moodle.LMS, "1874501", False)
    assert "_" not in named.student and "/" not in named.student  # an underscore would shift Moodle's id


def test_the_feedback_zip_holds_a_page_per_moodle_row_in_its_participants_folder(tmp_path):
    rows = [_graded("Ana", moodle.LMS, "1874501"), _graded("Bia", "canvas", "9100111"),
            Graded("Caio", moodle.LMS, "1874502", "Caio", "caio", None)]  # the grader failed on Caio: no page
    export = moodle.FeedbackZip(tmp_path / "feedback.zip")
    assert export.write(rows, 10.0) == 1
    with zipfile.ZipFile(export.path) as zf:
        (only,) = zf.namelist()
        assert only == f"{moodle.folder_name('Ana', '1874501')}/{moodle.FEEDBACK_FILE}"
        assert "Ana" in zf.read(only).decode("utf-8")


def test_the_worksheet_has_moodles_columns_and_only_its_graded_rows(tmp_path):
    rows = [_graded("Ana", moodle.LMS, "1874501"), _graded("Bia", "canvas", "9100111")]
    export = moodle.Worksheet(tmp_path / "w.csv", "pt")
    assert export.write(rows, 10.0) == 1
    header, line = export.path.read_text(encoding="utf-8-sig").splitlines()
    assert header.split(",") == list(moodle.COLUMNS["pt"])
    assert line.startswith(moodle.PARTICIPANT["pt"] + "1874501,Ana,")
