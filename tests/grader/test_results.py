"""What goes back to Gradescope and the class: complete results.json (numbers, tags, visibility, even for a refused
hand-in), and question 2's optional build_model as extra points, out of one maximum for everyone."""

import json

from grader import rubric
from grader.bundle import run_gradescope
from grader.grade import GradeConfig
from grader.sandbox.limits import Limits
from grader.template import render_module

from .conftest import CORPORA, SUBMISSIONS

MODULES = CORPORA / "modules"
COMPLETE = {"score", "execution_time", "output", "output_format", "tests"}
TEST_FIELDS = {"name", "number", "score", "max_score", "status", "output", "output_format", "tags", "visibility"}


def test_a_refused_hand_in_gets_a_complete_results_json_with_hidden_tests_after_the_due_date(tmp_path):
    (tmp_path / "rubric.toml").write_text('[options]\nvisibility = "after_due_date"\n')
    (tmp_path / "submission").mkdir()  # nothing handed in
    config = GradeConfig(rubric=rubric.load(tmp_path / "rubric.toml"), lang="pt")
    run_gradescope(tmp_path / "submission", tmp_path / "results.json", config, identity="1234")
    results = json.loads((tmp_path / "results.json").read_text())
    assert COMPLETE <= set(results) and results["score"] == 0
    assert results["tests"] and all(TEST_FIELDS <= set(t) for t in results["tests"])
    numbers = [t["number"] for t in results["tests"]]
    assert len(set(numbers)) == len(numbers) and numbers[0] == "1.1"
    by_group = {t["extra_data"]["group"]: t["visibility"] for t in results["tests"]}
    assert by_group == {"worked": "visible", "hidden": "after_due_date", "large": "after_due_date"}


def test_a_mistake_is_a_tag_of_the_tests_it_fails(grade, tmp_path):
    result = grade(SUBMISSIONS / "mistake_missing_scale.py", GradeConfig(limits=Limits(call_timeout=10.0)))
    tagged = [t for t in result.to_gradescope()["tests"] if t["tags"]]
    assert tagged and all(t["tags"] == ["missing-scale"] and t["score"] == 0 for t in tagged)


def test_the_starters_build_model_stub_left_as_is_costs_nothing(grade, tmp_path):
    module = (MODULES / "correct_mingpt.py").read_text()
    stub = render_module("en").split("def build_model", 1)[1]
    (tmp_path / "without.py").write_text(module)
    (tmp_path / "with_stub.py").write_text(module + "\n\ndef build_model" + stub)
    config = GradeConfig(limits=Limits(call_timeout=10.0))
    without, with_stub = grade(tmp_path / "without.py", config), grade(tmp_path / "with_stub.py", config)
    assert with_stub.max_score == without.max_score == without.score == with_stub.score
    assert any(t.function == "build_model" for t in with_stub.tests)  # still told how it went
