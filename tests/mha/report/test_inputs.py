"""The report's inputs: the committed fixtures load, and inputs of different runs are refused in one line."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from mha.artifacts.records import ArtifactError
from mha.report.inputs import load_inputs

FIXTURES = Path(__file__).resolve().parents[2] / "pipeline" / "fixtures"
_spec = importlib.util.spec_from_file_location("report_fixtures", FIXTURES / "make_report_fixtures.py")
report_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_fixtures)


@pytest.fixture
def root(tmp_path) -> Path:
    shutil.copytree(FIXTURES / "report", tmp_path / "in")
    return tmp_path / "in"


def load(root: Path):
    return load_inputs(report_fixtures.paths(root))


def error(root: Path) -> str:
    with pytest.raises(ArtifactError) as caught:
        load(root)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_the_fixtures_load_with_the_runs_numbers(root):
    inputs = load(root)
    results = json.loads((root / "models" / "train_attention.json").read_text())["results"]
    assert inputs.attention.results.best_val_loss == results["best_val_loss"]
    assert inputs.attention.curve.step[-1] == inputs.attention.results.iterations
    assert min(inputs.attention.curve.val_loss) == inputs.attention.results.best_val_loss
    assert inputs.attention_maps.n_layer == len(inputs.attention_maps.weights) == 2
    assert inputs.attention.record.data.train_chars + inputs.attention.record.data.val_chars == len(inputs.corpus)


def test_a_missing_run_record_names_the_file_and_the_stage_to_run(root):
    (root / "models" / "train_no_attention.json").unlink()
    message = error(root)
    assert "train_no_attention.json does not exist" in message and "dvc repro train_no_attention" in message


def test_a_corpus_other_than_the_one_trained_on_is_refused(root):
    corpus = report_fixtures.paths(root).corpus
    corpus.write_text(corpus.read_text() + "one more line\n")
    message = error(root)
    assert "train_attention.json is of a run on another corpus than" in message and "sha256" in message
    assert "dvc repro train_attention" in message


def test_runs_on_different_splits_are_refused(root):
    path = root / "models" / "train_no_attention.json"
    record = json.loads(path.read_text())
    record["data"]["train_chars"] -= 1
    path.write_text(json.dumps(record))
    assert "train_no_attention.json is of a run on other data than" in error(root)


def test_the_committed_fixtures_are_what_their_recipe_makes_now(tmp_path):
    """The recipe writes with the stages' own writers and is deterministic; the committed files are its
    output, so they cannot drift from the formats they stand in for."""
    report_fixtures.main(tmp_path)
    committed = sorted(p.relative_to(FIXTURES / "report") for p in (FIXTURES / "report").rglob("*") if p.is_file())
    assert committed == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    for name in committed:
        assert (tmp_path / name).read_bytes() == (FIXTURES / "report" / name).read_bytes(), name
