"""The grade status: a closed vocabulary whose members are their values in every file the grader writes."""

from __future__ import annotations

import json

import pytest

from grader.grade_status import NOT_GRADED, GradeStatus
from grader.messages import status_word
from grader.records import gradebook


def test_the_values_are_the_gradebooks_words_byte_for_byte():
    assert [s.value for s in GradeStatus] == ["graded", "refused", "import failed", "grader error"]
    assert NOT_GRADED == (GradeStatus.REFUSED, GradeStatus.IMPORT_FAILED, GradeStatus.GRADER_ERROR)


@pytest.mark.parametrize("status", list(GradeStatus))
def test_a_status_is_its_value_in_a_csv_cell_json_and_an_f_string_and_is_worded_in_both_languages(status):
    assert f"{status}" == str(status) == status.value
    assert json.dumps({"status": status}) == json.dumps({"status": status.value})
    line = gradebook.line("Ana", None, 1.0) | {"status": status}
    assert gradebook.text([line]).splitlines()[1].split(",")[gradebook.COLUMNS.index("status")] == status.value
    worded = {lang: status_word(status).text(lang) for lang in ("en", "pt")}  # a key the catalog lacks raises
    assert all(worded.values()) and worded["en"] != worded["pt"], worded


def test_a_status_read_back_from_a_file_equals_its_member():
    assert GradeStatus("import failed") is GradeStatus.IMPORT_FAILED and "refused" == GradeStatus.REFUSED
    with pytest.raises(ValueError):
        GradeStatus("graded ")
