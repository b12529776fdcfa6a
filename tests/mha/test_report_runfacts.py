"""Run facts describe the machine that trained (the run record), never the one rendering the page."""

import json
from pathlib import Path

from mha.report.runfacts import collect

FIXTURES = Path(__file__).resolve().parents[1] / "pipeline" / "fixtures" / "report"


def test_versions_threads_and_cpu_come_from_the_run_record(repo):
    record = json.loads((FIXTURES / "models" / "train_attention.json").read_text())
    record["versions"]["dvc"] = "0.0.1-recorded"
    facts = collect(record, repo)
    assert facts.versions == {"Python": "3.11.7", "PyTorch": "2.13.0", "DVC": "0.0.1-recorded", "NumPy": "2.4.6"}
    assert facts.cpu == "Fixture CPU @ 2.00GHz" and facts.threads == "2"


def test_what_the_record_lacks_is_missing_not_taken_from_this_machine(repo, tmp_path):
    facts = collect({"versions": {"python": "3.11.7", "dvc": None}}, tmp_path)
    assert facts.versions == {"Python": "3.11.7", "PyTorch": None, "DVC": None, "NumPy": None}
    assert facts.cpu is None and facts.threads is None
    assert facts.commit is None  # tmp_path is no git checkout
