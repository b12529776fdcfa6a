"""The run record read back by its own reader as the batch's writer wrote it."""

from __future__ import annotations

import json

import pytest

from grader.grade import GradeConfig
from grader.records import run_record
from grader.rubric import load


def _record(tmp_path, secret: bytes | None = b"s3cret") -> run_record.RunRecord:
    config = GradeConfig(lang="pt", secret=secret, seed=7, rubric=load())
    return run_record.make(config, tmp_path / "class", tmp_path / "results", {"Ana": "ana"}, 12.3456,
                           tmp_path / "pages")


def test_a_record_is_read_back_as_written_beside_its_gradebook(tmp_path):
    record = _record(tmp_path)
    path = run_record.write(tmp_path / "grades.csv", record)
    assert path == tmp_path / "grades.run.json"
    assert run_record.read(tmp_path / "grades.csv") == record
    assert record.seed is None and record.secret_fingerprint == run_record.fingerprint(b"s3cret")
    assert b"s3cret".hex() not in path.read_text() and "s3cret" not in path.read_text()


def test_the_public_seed_is_recorded_when_there_is_no_secret(tmp_path):
    record = _record(tmp_path, secret=None)
    assert (record.seed, record.secret_fingerprint) == (7, "")


def test_no_record_is_none_and_a_record_with_a_missing_key_is_refused_naming_it(tmp_path):
    assert run_record.read(tmp_path / "grades.csv") is None
    raw = _record(tmp_path).to_dict()
    del raw["stems"]
    (tmp_path / "grades.run.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ValueError, match=r"grades\.run\.json is not a run record: its keys are"):
        run_record.read(tmp_path / "grades.csv")
