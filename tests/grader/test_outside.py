"""Submissions in the conventions public implementations use (tests/grader/corpora/outside/), graded on
several seeds: correct math gets full marks in float32 or float64, every mistake keeps losing points,
and a mistake is named only where it is made.

OUTSIDE_SEEDS (default 3) sets how many seeds, up to all ten of SEEDS (docs/instructors.md)."""

import json
import os
import tomllib

import pytest

from grader import rubric
from grader.functions.contract import FUNCTIONS, MISTAKE_IDS

from .conftest import CORPORA

OUTSIDE = CORPORA / "outside"
EXPECTED = tomllib.loads((OUTSIDE / "expected.toml").read_text())
SEEDS = [7, 1234, 20240917, 31337, 99, 5, 271828, 42, 8, 606][: int(os.environ.get("OUTSIDE_SEEDS", "3"))]
FULL = rubric.load().total
# `graded` runs the batch once per seed (each limited to 600 s) in the first test's time: above the default.
pytestmark = pytest.mark.timeout(1800)


@pytest.fixture(scope="module")
def graded(run_grader, tmp_path_factory) -> dict:
    """seed -> student -> results.json, from the batch command with two jobs."""
    out = {}
    for seed in SEEDS:
        where = tmp_path_factory.mktemp(f"outside{seed}")
        proc = run_grader(OUTSIDE, "--csv", where / "g.csv", "--jobs", 2, "--seed", seed, "--lang", "en", timeout=600)
        assert proc.returncode == 0, proc.stderr
        out[seed] = {p.stem: json.loads(p.read_text()) for p in (where / "g_results").glob("*.json")}
    return out


def test_every_submission_has_an_expected_verdict_and_the_corpus_is_large_enough():
    stems = {p.stem for p in OUTSIDE.glob("*.py")}
    assert stems == set(EXPECTED) and len(stems) >= 25
    for name, verdict in EXPECTED.items():
        assert set(verdict["lose"]) <= set(FUNCTIONS) and set(verdict["names"]) <= set(MISTAKE_IDS), name
        first = (OUTSIDE / f"{name}.py").read_text().splitlines()[0]
        assert first.startswith("# Convention:") or first.startswith("# Mistake"), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_outside_submission_gets_its_verdict_on_every_seed(graded, name):
    want = EXPECTED[name]
    for seed, results in graded.items():
        result = results[name]
        lost = {t["extra_data"]["function"] for t in result["tests"] if t["status"] == "failed"}
        assert lost == set(want["lose"]), (seed, sorted(lost))
        assert (result["score"] == FULL) == (not want["lose"]), seed
        assert result["extra_data"]["mistakes"] == [m for m in MISTAKE_IDS if m in want["names"]], seed
        feedback = " ".join(t["output"] for t in result["tests"])
        for phrase in want.get("phrases", []):
            assert phrase in feedback, (seed, phrase)
        assert "inhomogeneous" not in feedback and "Traceback" not in feedback
