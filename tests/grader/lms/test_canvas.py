"""Canvas's home: its download's file names and its gradebook import."""

from __future__ import annotations

import pytest

from grader.intake.layouts import BUILT_IN, parse
from grader.lms import canvas
from grader.lms.exports import Graded
from grader.results import GradeResult
from grader.results import TestResult as Verdict  # not collected as a test class


def _graded(student: str, lms: str, lms_id: str) -> Graded:
    result = GradeResult(student, [Verdict("softmax: hidden cases", "softmax", "hidden", 3.0, True, "")], "en", 1)
    return Graded(student, lms, lms_id, student, student.lower(), result)


def test_a_late_file_of_the_download_names_the_user_id_and_the_files_own_name():
    named = parse("conceiçãoanabeatriz_LATE_9100111_240101_atencao-1.py", False, BUILT_IN)
    assert (named.lms, named.lms_id, named.student, named.inner, named.late) == (
        canvas.LMS, "9100111", "conceiçãoanabeatriz", "atencao-1.py", True)


def test_the_import_holds_canvas_rows_alone_on_out_of(tmp_path):
    rows = [_graded("ana", canvas.LMS, "9100111"), _graded("Bia", "moodle", "1874501")]
    export = canvas.Gradebook(tmp_path / "c.csv", "Atenção mascarada (123456)")
    assert export.write(rows, 10.0) == 1
    header, line = export.path.read_text(encoding="utf-8").splitlines()
    assert header == ",".join([*canvas.COLUMNS, "Atenção mascarada (123456)"])
    assert line == "ana,9100111,,,,10"


def test_an_assignment_column_without_its_id_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="'Atenção mascarada' must be the assignment's column"):
        canvas.Gradebook(tmp_path / "c.csv", "Atenção mascarada").write([], 10.0)
    assert not (tmp_path / "c.csv").exists()
