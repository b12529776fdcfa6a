"""The corpus under tests/grader/corpora/submissions/, graded once by the batch command, graded as the rules say."""

import re

import pytest

from grader import batch, rubric
from grader.functions.contract import FUNCTIONS, MISTAKE_IDS
from grader.sandbox.limits import Limits

from .conftest import CALL_TIMEOUT, SUBMISSIONS

RUBRIC = rubric.load()
FULL = RUBRIC.total
POINTS = {f: sum(p for (fn, _), p in RUBRIC.points.items() if fn == f) for f in {f for f, _ in RUBRIC.points}}


def submission_for(mistake: str) -> str:
    """The corpus file (without .py) that makes this one mistake."""
    return "mistake_" + mistake.replace("-", "_")


def feedback(result, function=None):
    return " ".join(t["output"] for t in result["tests"] if function is None or t["name"].startswith(function + ":"))


@pytest.mark.parametrize("style", ["numpy", "torch", "lists"])
def test_correct_submission_gets_full_marks_whatever_it_returns(graded_corpus, style):
    result = graded_corpus.results[f"correct_{style}"]
    assert result["score"] == FULL
    assert all(t["status"] == "passed" for t in result["tests"])
    assert result["extra_data"]["mistakes"] == []


@pytest.mark.parametrize("mistake", MISTAKE_IDS)
def test_each_mistake_is_named_by_its_identifier_and_no_other(graded_corpus, mistake):
    result = graded_corpus.results[submission_for(mistake)]
    assert result["extra_data"]["mistakes"] == [mistake]
    assert 0 < result["score"] < FULL
    failed = [t for t in result["tests"] if t["status"] == "failed"]
    assert failed and all(f"[{mistake}]" in t["output"] or not t["extra_data"]["mistakes"] for t in failed)
    assert any(f"[{mistake}]" in t["output"] for t in failed)


def test_the_corpus_has_one_submission_per_mistake_identifier():
    assert {p.stem for p in SUBMISSIONS.glob("mistake_*.py")} == {submission_for(m) for m in MISTAKE_IDS}


# submission -> (points it must get, a phrase its feedback must contain)
ADVERSARIAL = {
    "adv_infinite_loop": (FULL - POINTS["causal_mask"], f"did not finish within {CALL_TIMEOUT} s"),
    "adv_memory_hog": (FULL - POINTS["project"], "ran out of memory"),
    "adv_crash": (FULL - POINTS["attention_head"], "SIGSEGV"),
    "adv_exit_at_import": (0, "exit() or os._exit()"),
    "adv_syntax_error": (0, "SyntaxError: expected ':' (line 5 of your file)"),
    "adv_forged_json": (0, "entries are wrong"),
    "adv_forged_channel": (FULL - POINTS["project"], "private channel"),
    "adv_monkeypatch": (POINTS["project"], "entries are wrong"),
    "adv_lying_objects": (0, "not a matrix of numbers"),
    "adv_hardcoded_worked": (RUBRIC.worked_total, "expected shape"),
    "adv_imports_reference": (0, "cannot import the grader's packages"),
    "adv_slow_import": (FULL, ""),
    "adv_output_flood": (FULL, "printed"),
    "adv_huge_outputs": (FULL - POINTS["project"] - POINTS["scaled_scores"],
                         f"more than the {Limits().max_entries} allowed"),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_submission_earns_only_what_it_computes_and_is_told_why(graded_corpus, name):
    points, phrase = ADVERSARIAL[name]
    result = graded_corpus.results[name]
    assert result["score"] == points, (result["output"], feedback(result)[:2000], graded_corpus.stdout)
    assert phrase in result["output"] + " " + feedback(result)
    assert "Traceback" not in result["output"] + feedback(result)


def test_every_adversarial_submission_is_in_the_expectations():
    assert {p.stem for p in SUBMISSIONS.glob("adv_*.py")} == set(ADVERSARIAL)


def test_hard_coded_worked_example_answers_earn_at_most_half():
    assert RUBRIC.worked_total <= FULL / 2


def test_a_hang_costs_only_the_hanging_functions_tests(graded_corpus):
    result = graded_corpus.results["adv_infinite_loop"]
    failed = [t["extra_data"]["function"] for t in result["tests"] if t["status"] == "failed"]
    assert failed == [f for f, _, _ in RUBRIC.tests() if f == "causal_mask"]  # every causal_mask test, no other


def test_printed_output_is_capped_in_the_feedback(graded_corpus):
    output = graded_corpus.results["adv_output_flood"]["output"]
    printed = re.search(r"printed (\d+) bytes", output)
    assert printed and int(printed.group(1)) > 20_000_000  # 20 MB at import, more on every softmax call ...
    assert len(output) < 5000  # ... a few kB shown


def test_gradebook_has_one_row_per_submission_and_points_that_add_up(graded_corpus):
    book = graded_corpus.gradebook
    assert sorted(book["student"]) == sorted(p.stem for p in SUBMISSIONS.glob("*.py"))
    assert list(book.columns) == batch.COLUMNS and set(FUNCTIONS) <= set(batch.COLUMNS)
    assert (book[list(FUNCTIONS)].sum(axis=1) == book["total"]).all()
    row = book.set_index("student").loc["mistake_mask_inverted"]
    assert row["mistakes"] == "mask-inverted" and row["causal_mask"] == 0 and row["project"] == POINTS["project"]
    assert (book["error"] == "").all()


def test_batch_summary_counts_students_per_mistake(graded_corpus):
    lines = graded_corpus.stdout.splitlines()
    assert lines[0].startswith(f"Graded {len(graded_corpus.gradebook)} submissions")
    counts = {line.split()[0]: int(line.split()[-1]) for line in lines if line.startswith("  ")}  # id (title) n
    book = graded_corpus.gradebook
    for mistake in MISTAKE_IDS:
        assert counts[mistake] == sum(mistake in m.split(";") for m in book["mistakes"])


def test_gradescope_results_have_the_documented_fields(graded_corpus):
    result = graded_corpus.results["mistake_softmax_wrong_axis"]
    assert set(result) >= {"score", "execution_time", "output", "tests", "extra_data"}
    assert result["score"] == sum(t["score"] for t in result["tests"])
    for test in result["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in ("passed", "failed")
        assert test["name"].split(":")[0] in POINTS
    assert "[softmax-wrong-axis]" in feedback(result, "softmax")


def test_hidden_case_feedback_never_shows_an_expected_value(graded_corpus):
    for name, result in graded_corpus.results.items():
        for test in result["tests"]:
            if ": worked example" not in test["name"]:
                assert "gives" not in test["output"] and "expected value" not in test["output"], (name, test)


@pytest.mark.parametrize(
    "submission, function, phrase",
    [
        ("mistake_softmax_wrong_axis", "softmax", "row 1 sums to"),
        ("mistake_mask_inverted", "causal_mask", "should be masked"),
        ("mistake_mask_not_applied", "attention_weights", "cannot attend to the future token"),
        # same shape now: d_model = h·d_k
        ("mistake_missing_output_projection", "multi_head_attention", "entries are wrong"),
        ("mistake_softmax_overflow", "softmax", "is nan"),
    ],
)
def test_feedback_says_what_to_fix_in_the_students_terms(graded_corpus, submission, function, phrase):
    assert phrase in feedback(graded_corpus.results[submission], function)
