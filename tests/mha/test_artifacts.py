"""The files stages hand each other: what a writer writes its reader reads back, and damage is one clear line."""

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from mha.artifacts.attention import AttentionMaps, attention_source, read_attention_maps, write_attention_maps
from mha.artifacts.records import ArtifactError, Source
from mha.artifacts.run import (
    CURVE_COLUMNS,
    Curve,
    CurveRow,
    DataRecord,
    RunRecord,
    RunResults,
    curve_source,
    read_curve,
    read_finished_run,
    read_run_record,
    read_sample,
    record_source,
    sample_source,
    write_curve,
    write_run_record,
    write_sample,
)
from mha.artifacts.worked import read_worked_example, worked_example_source, write_worked_example
from mha.verify import verify_worked_example

RESULTS = RunResults(best_val_loss=1.5, final_val_loss=1.52, final_train_loss=1.4, iterations=40, tokens_seen=5120,
                     parameters=1234, wall_seconds=2.5, tokens_per_second=2048.0)
RECORD = RunRecord(model={"n_layer": 1, "attention": True}, train={"threads": 2, "seed": 7}, device="cpu",
                   attention_kernel="explicit",
                   data=DataRecord(path="corpus.txt", sha256="ab" * 32, val_fraction=0.1, train_chars=90, val_chars=10),
                   versions={"torch": "2.13.0", "dvc": None}, cpu=None, code={"model.py": "cd" * 32}, parameters=1234,
                   results=RESULTS)
CURVE = Curve([CurveRow(step=0, tokens=0, train_loss=4.1, val_loss=4.2, lr=1e-4),
               CurveRow(step=10, tokens=1280, train_loss=2.5, val_loss=2.6, lr=0.0125)])
MAPS = AttentionMaps(excerpt="ab", tokens=["a", "b"], n_layer=1, n_head=2,
                     weights=[[[[1.0, 0.0], [0.25, 0.75]], [[1.0, 0.0], [0.5, 0.5]]]])


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def error_of(read, source: Source) -> str:
    with pytest.raises(ArtifactError) as caught:
        read(source)
    message = str(caught.value)
    assert "\n" not in message and str(source.path) in message
    return message


@pytest.fixture
def record_file(tmp_path) -> Source:
    source = record_source(tmp_path / "train_attention.json", "train_attention")
    write_run_record(source.path, RECORD)
    return source


def test_every_record_reads_back_as_written(tmp_path, record_file):
    assert read_finished_run(record_file) == (RECORD, RESULTS)
    write_curve(tmp_path / "plot.csv", CURVE)
    assert read_curve(curve_source(tmp_path / "plot.csv", "train_attention")) == CURVE
    write_attention_maps(tmp_path / "maps.json", MAPS)
    assert read_attention_maps(attention_source(tmp_path / "maps.json")) == MAPS
    write_sample(tmp_path / "sample.txt", "ROMEO:\nhi")
    assert read_sample(sample_source(tmp_path / "sample.txt", "train_attention")) == "ROMEO:\nhi"
    worked = verify_worked_example().record()
    write_worked_example(tmp_path / "worked.json", worked)
    assert read_worked_example(worked_example_source(tmp_path / "worked.json")) == worked


def test_the_curve_is_a_csv_with_the_record_fields_as_header_and_fixed_decimals(tmp_path):
    write_curve(tmp_path / "plot.csv", Curve([replace(CURVE.rows[1], train_loss=2.1234567, lr=0.0123456789)]))
    lines = (tmp_path / "plot.csv").read_text().splitlines()
    assert lines == [",".join(CURVE_COLUMNS), "10,1280,2.123457,2.600000,0.012345679"]
    assert CURVE_COLUMNS == ("step", "tokens", "train_loss", "val_loss", "lr")  # dvc.yaml plots read val_loss


def test_a_missing_file_names_it_and_the_stage_to_run(tmp_path):
    source = record_source(tmp_path / "train_no_attention.json", "train_no_attention")
    message = error_of(read_run_record, source)
    assert "does not exist" in message and "dvc repro train_no_attention" in message


def test_a_record_lacking_a_field_names_the_field(record_file):
    edit_json(record_file.path, lambda r: r["results"].pop("tokens_per_second"))
    assert "lacks results.tokens_per_second: re-run `dvc repro train_attention`" in error_of(read_run_record,
                                                                                             record_file)


def test_a_non_numeric_or_non_finite_loss_is_refused_with_its_value(record_file):
    edit_json(record_file.path, lambda r: r["results"].update(best_val_loss="NaN"))
    assert "results.best_val_loss = 'NaN', expected a finite number" in error_of(read_run_record, record_file)
    record_file.path.write_text(record_file.path.read_text().replace('"NaN"', "NaN"))
    assert "results.best_val_loss = nan" in error_of(read_run_record, record_file)


def test_a_count_written_as_text_or_bool_is_refused(record_file):
    edit_json(record_file.path, lambda r: r.update(parameters=True))
    assert "parameters = True, expected int" in error_of(read_run_record, record_file)


def test_a_run_that_did_not_finish_has_no_results_to_report(tmp_path):
    source = record_source(tmp_path / "run.json", "train_attention")
    write_run_record(source.path, replace(RECORD, results=None))
    assert read_run_record(source).results is None
    assert "has no results (the run did not finish)" in error_of(read_finished_run, source)


def test_truncated_json_gives_the_position(record_file):
    record_file.path.write_text(record_file.path.read_text()[:200])
    message = error_of(read_run_record, record_file)
    assert "is not valid JSON" in message and "line" in message


def test_a_binary_file_is_reported_as_not_text(tmp_path):
    source = sample_source(tmp_path / "sample.txt", "train_attention")
    source.path.write_bytes(b"\xff\xfe\x00garbage")
    assert "is not UTF-8 text" in error_of(read_sample, source)


def test_an_empty_sample_is_refused(tmp_path):
    source = sample_source(tmp_path / "sample.txt", "train_attention")
    write_sample(source.path, "  \n")
    assert "is empty" in error_of(read_sample, source)


def test_a_curve_with_the_wrong_header_shows_the_expected_one(tmp_path):
    source = curve_source(tmp_path / "plot.csv", "train_attention")
    write_curve(source.path, CURVE)
    source.path.write_text(source.path.read_text().replace("val_loss", "valid_loss", 1))
    assert "must start with the header step,tokens,train_loss,val_loss,lr" in error_of(read_curve, source)


def test_a_non_numeric_curve_row_names_its_line(tmp_path):
    source = curve_source(tmp_path / "plot.csv", "train_attention")
    write_curve(source.path, CURVE)
    lines = source.path.read_text().splitlines()
    lines[2] = "10.5,1280,2,3,4"
    source.path.write_text("\n".join(lines) + "\n")
    assert "line 3 is not numeric (step and tokens whole numbers)" in error_of(read_curve, source)


def test_attention_rows_that_are_not_distributions_name_layer_head_and_row(tmp_path):
    source = attention_source(tmp_path / "maps.json")
    write_attention_maps(source.path, MAPS)
    edit_json(source.path, lambda m: m["weights"][0][1][1].__setitem__(0, 0.9))
    assert "layer 1 head 2 row 2 is not a probability distribution" in error_of(read_attention_maps, source)


def test_attention_weights_of_the_wrong_shape_state_the_expected_shape(tmp_path):
    source = attention_source(tmp_path / "maps.json")
    write_attention_maps(source.path, MAPS)
    edit_json(source.path, lambda m: m["weights"][0].pop())
    assert "weights must be [n_layer=1][n_head=2][2][2]" in error_of(read_attention_maps, source)
    with pytest.raises(ValueError, match="tokens must spell the excerpt"):
        replace(MAPS, excerpt="ba")  # the writer's side is checked by the same record


def test_a_worked_example_without_its_checks_says_which_stage_to_rerun(tmp_path):
    source = worked_example_source(tmp_path / "worked.json")
    write_worked_example(source.path, verify_worked_example().record())
    edit_json(source.path, lambda m: m["checks"]["head 1 A"].pop("passed"))
    assert "lacks checks.head 1 A.passed: re-run `dvc repro verify_example`" in error_of(read_worked_example, source)


def test_the_run_record_keeps_the_keys_dvc_and_the_report_read(record_file):
    raw = json.loads(record_file.path.read_text())
    assert raw["results"] == asdict(RESULTS) and raw["model"]["attention"] is True
    assert set(raw) == {f for f in RunRecord.__dataclass_fields__}
