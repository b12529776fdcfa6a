"""Loading the report's inputs: the fixtures load, and each kind of damage gives a one-line message."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from mha.report.inputs import ReportInputError, load_inputs

FIXTURES = Path(__file__).resolve().parents[1] / "pipeline" / "fixtures"
_spec = importlib.util.spec_from_file_location("report_fixtures", FIXTURES / "make_report_fixtures.py")
report_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_fixtures)


@pytest.fixture
def root(tmp_path) -> Path:
    shutil.copytree(FIXTURES / "report", tmp_path / "in")
    return tmp_path / "in"


def load(root: Path):
    return load_inputs(report_fixtures.paths(root))


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_the_fixtures_load_with_the_contracts_numbers(root):
    inputs = load(root)
    metrics = json.loads((root / "models" / "train_attention.json").read_text())["results"]
    assert inputs.attention.metrics == metrics
    assert inputs.attention.curve.step[-1] == metrics["iterations"]
    assert min(inputs.attention.curve.val_loss) == metrics["best_val_loss"]
    assert inputs.attention_maps.n_layer == len(inputs.attention_maps.weights) == 2
    assert "".join(inputs.attention_maps.tokens) == inputs.attention_maps.excerpt


def error(root: Path) -> str:
    with pytest.raises(ReportInputError) as caught:
        load(root)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_missing_run_record_names_the_file_and_the_stage_to_run(root):
    (root / "models" / "train_no_attention.json").unlink()
    message = error(root)
    assert "train_no_attention.json does not exist" in message and "dvc repro train_no_attention" in message


def test_results_lacking_a_contract_key_name_the_key(root):
    edit_json(root / "models" / "train_attention.json", lambda m: m["results"].pop("tokens_per_second"))
    assert "results lack tokens_per_second" in error(root)


def test_a_record_without_results_says_to_rerun_training(root):
    edit_json(root / "models" / "train_attention.json", lambda m: m.pop("results"))
    message = error(root)
    assert "has no results section" in message and "dvc repro train_attention" in message


def test_a_non_numeric_loss_is_refused_with_its_value(root):
    edit_json(root / "models" / "train_attention.json", lambda m: m["results"].update(best_val_loss="NaN"))
    assert "best_val_loss='NaN'" in error(root)


def test_worked_example_matrices_without_the_tolerances_are_refused(root):
    edit_json(root / "artifacts" / "worked_example.json", lambda m: m.pop("published_tolerance"))
    assert "lack 'published_tolerance'" in error(root)


def test_truncated_json_gives_the_position(root):
    path = root / "artifacts" / "attention_weights.json"
    path.write_text(path.read_text()[:500])
    message = error(root)
    assert "attention_weights.json is not valid JSON" in message and "line" in message


def test_a_plot_file_with_the_wrong_header_shows_the_expected_one(root):
    path = root / "plots" / "train_attention.csv"
    path.write_text(path.read_text().replace("val_loss", "valid_loss", 1))
    assert "must start with the header step,tokens,train_loss,val_loss,lr" in error(root)


def test_a_non_numeric_plot_row_names_its_line(root):
    path = root / "plots" / "train_no_attention.csv"
    lines = path.read_text().splitlines()
    lines[3] = "400,x,1,2,3"
    path.write_text("\n".join(lines) + "\n")
    assert "line 4 is not numeric" in error(root)


def test_attention_rows_that_are_not_distributions_name_layer_head_and_row(root):
    def damage(maps):
        maps["weights"][1][0][5][0] += 0.5
    edit_json(root / "artifacts" / "attention_weights.json", damage)
    assert "layer 2 head 1 row 6 is not a probability distribution" in error(root)


def test_attention_weights_of_the_wrong_shape_state_the_expected_shape(root):
    edit_json(root / "artifacts" / "attention_weights.json", lambda m: m["weights"][0].pop())
    assert "weights must be [n_layer=2][n_head=2][64][64]" in error(root)


def test_a_worked_example_without_its_matrices_says_which_stage_to_rerun(root):
    edit_json(root / "artifacts" / "worked_example.json", lambda m: m.pop("heads"))
    assert "lack 'heads': re-run `dvc repro verify_example`" in error(root)


def test_an_empty_sample_is_refused(root):
    (root / "samples" / "train_attention.txt").write_text("  \n")
    assert "train_attention.txt is empty" in error(root)


def test_a_binary_file_is_reported_as_not_text(root):
    (root / "data" / "corpus.txt").write_bytes(b"\xff\xfe\x00garbage" * 50)
    assert "corpus.txt is not UTF-8 text" in error(root)


def test_the_committed_fixtures_are_what_their_recipe_makes_now(tmp_path):
    """The recipe is deterministic and the committed files are its output, so they cannot drift from the
    code they stand in for (the worked example is computed by the real verify_example code)."""
    report_fixtures.main(tmp_path)
    committed = sorted(p.relative_to(FIXTURES / "report") for p in (FIXTURES / "report").rglob("*") if p.is_file())
    assert committed == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    for name in committed:
        assert (tmp_path / name).read_bytes() == (FIXTURES / "report" / name).read_bytes(), name


def test_counts_written_as_floats_are_accepted_but_fractional_steps_are_not(root):
    path = root / "plots" / "train_attention.csv"
    lines = path.read_text().splitlines()
    step, tokens, *rest = lines[2].split(",")
    lines[2] = ",".join([f"{step}.0", f"{tokens}.0", *rest])
    path.write_text("\n".join(lines) + "\n")
    assert load(root).attention.curve.step[1] == int(step)
    lines[2] = ",".join([f"{step}.5", tokens, *rest])
    path.write_text("\n".join(lines) + "\n")
    assert "line 3 is not numeric (step and tokens whole numbers)" in error(root)
