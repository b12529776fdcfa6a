"""A results.json read back by its own reader as GradeResult.to_gradescope wrote it."""

from __future__ import annotations

import json

import pytest

from grader.records import results_json
from grader.results import GradeResult
from grader.results import TestResult as Verdict  # not collected as a test class
from mha.files import write_json


def _result(language: str = "python", timed_out: bool = False) -> GradeResult:
    tests = [Verdict("softmax: hidden cases", "softmax", "hidden", 3.0, True, "ok"),
             Verdict("project: worked example", "project", "worked", 2.0, False, "=1+1 wrong", ("missing-scale",))]
    return GradeResult("x", tests, "en", 1, ran_out_of_time=timed_out, language=language)


@pytest.mark.parametrize("language, timed_out", [("python", False), ("r", True)])
def test_the_tests_the_language_and_the_time_out_are_read_back_as_written(tmp_path, language, timed_out):
    path = tmp_path / "ana.json"
    write_json(path, _result(language, timed_out).to_gradescope())
    back = results_json.read(path)
    assert back.tests == (
        results_json.TestRow("softmax", "hidden", "softmax: hidden cases", True, "ok", ()),
        results_json.TestRow("project", "worked", "project: worked example", False, "=1+1 wrong", ("missing-scale",)))
    assert (back.language, back.timed_out) == (language, timed_out)


def test_the_writer_is_gradescopes_shape_without_the_seed(tmp_path):
    written = _result().to_gradescope()
    assert written["score"] == 3.0 and [t["status"] for t in written["tests"]] == ["passed", "failed"]
    assert [t["number"] for t in written["tests"]] == ["1.1", "2.1"]
    assert "seed" not in json.dumps(written).replace("public_seed", "")


def test_a_language_it_does_not_know_is_read_as_python(tmp_path):
    raw = _result().to_gradescope()
    raw["extra_data"]["language"] = "<script>"
    (tmp_path / "x.json").write_text(json.dumps(raw), encoding="utf-8")
    assert results_json.read(tmp_path / "x.json").language == "python"


@pytest.mark.parametrize("body", ["not json", '{"tests": [{"name": "softmax"}]}'])
def test_a_file_that_is_no_results_json_is_refused_naming_it(tmp_path, body):
    (tmp_path / "x.json").write_text(body, encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.json is not a results JSON the batch wrote"):
        results_json.read(tmp_path / "x.json")
