"""The files stages hand each other: what a writer writes its reader reads back, and damage is one clear line."""

import json
from dataclasses import asdict, fields, replace
from pathlib import Path

import pytest

from mha.artifacts.attention import ATTENTION_MAPS, AttentionMaps
from mha.artifacts.records import ArtifactError
from mha.artifacts.run import (
    CURVE_COLUMNS,
    RUN_RECORD,
    Curve,
    CurveRow,
    DataRecord,
    RunRecord,
    RunResults,
    read_curve,
    read_finished_run,
    read_sample,
    write_curve,
    write_sample,
)
from mha.artifacts.worked import WORKED_EXAMPLE
from mha.verify import verify_worked_example

RESULTS = RunResults(best_val_loss=1.5, final_val_loss=1.52, final_train_loss=1.4, iterations=40, tokens_seen=5120,
                     parameters=1234)
RECORD = RunRecord(model={"n_layer": 1, "attention": True}, train={"threads": 2, "seed": 7}, device="cpu",
                   attention_kernel="explicit",
                   data=DataRecord(path="corpus.txt", sha256="ab" * 32, val_fraction=0.1, train_chars=90, val_chars=10),
                   versions={"torch": "2.13.0", "dvc": None}, denormals="kept", code={"model.py": "cd" * 32},
                   parameters=1234,
                   results=RESULTS)
CURVE = Curve([CurveRow(step=0, tokens=0, train_loss=4.1, val_loss=4.2, lr=1e-4),
               CurveRow(step=10, tokens=1280, train_loss=2.5, val_loss=2.6, lr=0.0125)])
MAPS = AttentionMaps(excerpt="ab", tokens=["a", "b"], n_layer=1, n_head=2,
                     weights=[[[[1.0, 0.0], [0.25, 0.75]], [[1.0, 0.0], [0.5, 0.5]]]])


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def error_of(read, path: Path, *args) -> str:
    """The one-line message reading ``path`` raises; it names the file."""
    with pytest.raises(ArtifactError) as caught:
        read(path, *args)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


@pytest.fixture
def record_file(tmp_path) -> Path:
    RUN_RECORD.write(tmp_path / "train_attention.json", RECORD)
    return tmp_path / "train_attention.json"


def test_every_record_reads_back_as_written(tmp_path, record_file):
    assert read_finished_run(record_file, "train_attention") == (RECORD, RESULTS)
    write_curve(tmp_path / "plot.csv", CURVE)
    assert read_curve(tmp_path / "plot.csv", "train_attention") == CURVE
    ATTENTION_MAPS.write(tmp_path / "maps.json", MAPS)
    assert ATTENTION_MAPS.read(tmp_path / "maps.json") == MAPS
    write_sample(tmp_path / "sample.txt", "ROMEO:\nhi")
    assert read_sample(tmp_path / "sample.txt", "train_attention") == "ROMEO:\nhi"
    worked = verify_worked_example().record()
    WORKED_EXAMPLE.write(tmp_path / "worked.json", worked)
    assert WORKED_EXAMPLE.read(tmp_path / "worked.json") == worked


def test_the_curve_is_a_csv_with_the_record_fields_as_header_and_fixed_decimals(tmp_path):
    write_curve(tmp_path / "plot.csv", Curve([replace(CURVE.rows[1], train_loss=2.1234567, lr=0.0123456789)]))
    lines = (tmp_path / "plot.csv").read_text().splitlines()
    assert lines == [",".join(CURVE_COLUMNS), "10,1280,2.123457,2.600000,0.012345679"]
    assert CURVE_COLUMNS == ("step", "tokens", "train_loss", "val_loss", "lr")  # dvc.yaml plots read val_loss


def test_a_missing_file_names_it_and_the_stage_to_run(tmp_path):
    message = error_of(RUN_RECORD.read, tmp_path / "train_no_attention.json", "train_no_attention")
    assert "does not exist" in message and "dvc repro train_no_attention" in message


def test_a_record_lacking_a_field_names_the_field(record_file):
    edit_json(record_file, lambda r: r["results"].pop("tokens_seen"))
    message = error_of(RUN_RECORD.read, record_file, "train_attention")
    assert "lacks results.tokens_seen: re-run `dvc repro train_attention`" in message


def test_a_non_numeric_or_non_finite_loss_is_refused_with_its_value(record_file):
    edit_json(record_file, lambda r: r["results"].update(best_val_loss="NaN"))
    assert "results.best_val_loss = 'NaN', expected a finite number" in error_of(RUN_RECORD.read, record_file)
    record_file.write_text(record_file.read_text().replace('"NaN"', "NaN"))
    assert "results.best_val_loss = nan" in error_of(RUN_RECORD.read, record_file)


def test_a_count_written_as_a_bool_is_refused(record_file):
    edit_json(record_file, lambda r: r.update(parameters=True))
    assert "parameters = True, expected int" in error_of(RUN_RECORD.read, record_file)


def test_a_run_that_did_not_finish_has_no_results_to_report(tmp_path):
    RUN_RECORD.write(tmp_path / "run.json", replace(RECORD, results=None))
    assert RUN_RECORD.read(tmp_path / "run.json").results is None
    assert "has no results (the run did not finish)" in error_of(read_finished_run, tmp_path / "run.json", "train")


def test_truncated_json_gives_the_position(record_file):
    record_file.write_text(record_file.read_text()[:200])
    message = error_of(RUN_RECORD.read, record_file)
    assert "is not valid JSON" in message and "line" in message


def test_a_binary_file_is_reported_as_not_text(tmp_path):
    (tmp_path / "sample.txt").write_bytes(b"\xff\xfe\x00garbage")
    assert "is not UTF-8 text" in error_of(read_sample, tmp_path / "sample.txt", "train_attention")


def test_an_empty_sample_is_refused(tmp_path):
    write_sample(tmp_path / "sample.txt", "  \n")
    assert "is empty" in error_of(read_sample, tmp_path / "sample.txt", "train_attention")


def test_a_curve_with_the_wrong_header_shows_the_expected_one(tmp_path):
    path = tmp_path / "plot.csv"
    write_curve(path, CURVE)
    path.write_text(path.read_text().replace("val_loss", "valid_loss", 1))
    assert "must start with the header step,tokens,train_loss,val_loss,lr" in error_of(read_curve, path, "train")


def test_a_non_numeric_curve_row_names_its_line(tmp_path):
    path = tmp_path / "plot.csv"
    write_curve(path, CURVE)
    lines = path.read_text().splitlines()
    lines[2] = "10.5,1280,2,3,4"
    path.write_text("\n".join(lines) + "\n")
    assert "line 3 is not numeric (step and tokens whole numbers)" in error_of(read_curve, path, "train")


def test_attention_rows_that_are_not_distributions_name_layer_head_and_row(tmp_path):
    path = tmp_path / "maps.json"
    ATTENTION_MAPS.write(path, MAPS)
    edit_json(path, lambda m: m["weights"][0][1][1].__setitem__(0, 0.9))
    assert "layer 1 head 2 row 2 is not a probability distribution" in error_of(ATTENTION_MAPS.read, path)


def test_attention_weights_of_the_wrong_shape_state_the_expected_shape(tmp_path):
    path = tmp_path / "maps.json"
    ATTENTION_MAPS.write(path, MAPS)
    edit_json(path, lambda m: m["weights"][0].pop())
    assert "weights must be [n_layer=1][n_head=2][2][2]" in error_of(ATTENTION_MAPS.read, path)
    with pytest.raises(ValueError, match="tokens must spell the excerpt"):
        replace(MAPS, excerpt="ba")  # the writer's side is checked by the same record


def test_a_worked_example_without_a_verdict_says_which_stage_to_rerun(tmp_path):
    path = tmp_path / "worked.json"
    WORKED_EXAMPLE.write(path, verify_worked_example().record())
    edit_json(path, lambda m: m["checks"]["head 1 A"].pop("passed"))
    assert "lacks checks.head 1 A.passed: re-run `dvc repro verify_example`" in error_of(WORKED_EXAMPLE.read, path)


def test_the_run_record_keeps_the_keys_dvc_and_the_report_read(record_file):
    raw = json.loads(record_file.read_text())
    assert raw["results"] == asdict(RESULTS) and raw["model"]["attention"] is True
    assert set(raw) == {f.name for f in fields(RunRecord)}
