"""Run facts describe the run that trained (the run record), never the process rendering the page."""

import subprocess
from dataclasses import replace
from pathlib import Path

from mha.artifacts.run import RUN_RECORD
from mha.report.runfacts import collect

FIXTURES = Path(__file__).resolve().parents[2] / "pipeline" / "fixtures" / "report"


def fixture_record():
    return RUN_RECORD.read(FIXTURES / "models" / "train_attention.json", "train_attention")


def test_versions_and_threads_come_from_the_run_record(repo):
    record = fixture_record()
    record = replace(record, versions={**record.versions, "dvc": "0.0.1-recorded"})
    facts = collect(record, repo)
    assert facts.versions == {"Python": "3.11.7", "PyTorch": "2.13.0", "DVC": "0.0.1-recorded", "NumPy": "2.4.6"}
    assert facts.threads == "2"


def test_what_the_record_lacks_is_missing_not_taken_from_this_machine(tmp_path):
    record = replace(fixture_record(), versions={"python": "3.11.7", "dvc": None}, train={})
    facts = collect(record, tmp_path)
    assert facts.versions == {"Python": "3.11.7", "PyTorch": None, "DVC": None, "NumPy": None}
    assert facts.threads is None
    assert facts.commit is None  # tmp_path is no git checkout


def test_the_commit_shown_is_the_last_to_change_the_inputs_not_the_one_that_holds_the_results(tmp_path):
    """A clone of the commit that holds the results reproduces the page it holds: committing dvc.lock, metrics and
    plots changes no commit the page shows."""
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com"]
    (tmp_path / "params.yaml").write_text("train: {}\n")
    subprocess.run(git + ["init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(git + ["add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(git + ["commit", "-qm", "inputs"], cwd=tmp_path, check=True)
    inputs = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\n")
    subprocess.run(git + ["add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(git + ["commit", "-qm", "results"], cwd=tmp_path, check=True)
    facts = collect(fixture_record(), tmp_path)
    assert facts.commit == inputs and facts.modified == ()
    (tmp_path / "params.yaml").write_text("train: {lr: 1}\n")
    assert collect(fixture_record(), tmp_path).modified == ("params.yaml",)
