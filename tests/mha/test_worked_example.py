import json
import math

import numpy as np
import pytest

from mha import verify, worked_example
from mha.artifacts.worked import WORKED_EXAMPLE


def test_worked_example_matches_every_published_matrix():
    result = verify.verify_worked_example()
    assert len(result.comparisons) == 13  # 6 per head and the output
    for comparison in result.comparisons:
        assert comparison.passed, comparison
        assert comparison.max_abs_deviation <= worked_example.PUBLISHED_TOLERANCE
    assert result.passed
    assert max(result.disagreements.values()) <= 1e-12


def test_worked_example_shape_is_the_courses():
    example = worked_example.load()
    assert example.tokens == ["Life", "is", "awesome"]
    assert (example.n, example.d_model, example.h, example.d_k) == (3, 4, 2, 2)
    np.testing.assert_array_equal(example.W_O, np.eye(4))


def test_published_scores_are_the_scores_times_sqrt_dk():
    example = worked_example.load()
    trace = worked_example.trace(example)
    np.testing.assert_allclose(trace.heads[0].S, example.published["head 1 S·√d_k"] / math.sqrt(2))


def corrupt(tmp_path, head, key, row, col, value):
    data = json.loads((worked_example.resources.files("mha") / "data/worked_example.json").read_text())
    data["published"]["heads"][head - 1][key][row - 1][col - 1] = value
    path = tmp_path / "worked_example.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def run_verify(run_stage):
    """pipeline/verify_example.py on the command line: ``run_verify(tmp_path, published=None)``."""

    def run(tmp_path, published=None):
        extra = ["--published", published] if published else []
        return run_stage("verify_example", "--metrics", tmp_path / "metrics.json",
                         "--matrices", tmp_path / "matrices.json", *extra, cwd=None)

    return run


def test_verify_stage_writes_a_summary_and_every_matrix_verdict(repo, tmp_path, run_verify):
    proc = run_verify(tmp_path)
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    # the metrics file is a summary for people (`dvc metrics show`); the per-matrix detail is in the artifact
    assert set(metrics) == {"passed", "max_deviation", "max_disagreement"} and metrics["passed"] is True
    assert 0 < metrics["max_deviation"] <= 5e-4 and metrics["max_disagreement"] <= 1e-12
    record = WORKED_EXAMPLE.read(tmp_path / "matrices.json")
    assert set(record.checks) >= {"head 1 A", "head 2 output", "output", "head 1 S·√d_k"}
    assert all(check.passed for check in record.checks.values())
    assert max(check.max_abs_deviation for check in record.checks.values()) == metrics["max_deviation"]
    assert (record.published_tolerance, record.implementation_tolerance) == (5e-4, 1e-12)
    assert record.tokens == ["Life", "is", "awesome"]
    assert record.heads[0].M[0][1] is None  # −inf above the diagonal
    # each check holds the computed matrix beside the published one, the scores on the published scale S·√d_k
    assert record.checks["head 2 A"].computed == record.heads[1].A != record.checks["head 2 A"].published
    scores = record.checks["head 1 S·√d_k"]
    np.testing.assert_allclose(scores.computed, np.asarray(record.heads[0].S) * math.sqrt(2))
    np.testing.assert_allclose(scores.computed, scores.published, atol=5e-4)


def test_corrupted_published_value_fails_the_stage_and_names_the_cell(repo, tmp_path, run_verify):
    published = corrupt(tmp_path, head=1, key="A", row=3, col=3, value=0.858)
    proc = run_verify(tmp_path, published)
    assert proc.returncode == 1
    assert "head 1 A" in proc.stderr
    assert "row 3, column 3" in proc.stderr
    computed = worked_example.trace(worked_example.load()).heads[0].A[2, 2]
    assert "0.858" in proc.stderr and f"{computed:.6f}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert json.loads((tmp_path / "metrics.json").read_text())["passed"] is False
    checks = WORKED_EXAMPLE.read(tmp_path / "matrices.json").checks
    assert checks["head 1 A"].passed is False and checks["head 2 A"].passed is True
    assert checks["head 1 A"].published[2][2] == 0.858


def test_unreadable_published_file_is_a_clear_error(repo, tmp_path, run_verify):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = run_verify(tmp_path, bad)
    assert proc.returncode == 2
    assert "cannot read the worked example" in proc.stderr
    assert "Traceback" not in proc.stderr
