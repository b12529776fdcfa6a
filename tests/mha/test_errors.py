"""What the library refuses, as the person running `dvc repro` reads it: one English line that names the file
or the setting and what to do, whatever the locale, and no traceback."""

import hashlib
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from mha import fetch
from mha.artifacts.run import RUN_RECORD, read_curve
from mha.schema import GPTConfig

REPO = Path(__file__).resolve().parents[2]
PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())


def test_a_missing_stage_file_names_itself_and_the_stage_to_run(tmp_path):
    with pytest.raises(ValueError) as info:  # ArtifactError is a ValueError, which every stage refuses
        RUN_RECORD.read(tmp_path / "run.json", "train_attention")
    assert str(info.value) == (f"run record {tmp_path / 'run.json'} does not exist: "
                               "run `dvc repro train_attention` first")


def test_a_malformed_stage_file_names_the_line_and_the_stage_to_rerun(tmp_path):
    curve = tmp_path / "curve.csv"
    curve.write_text("step,tokens,train_loss,val_loss,lr\n1,2,3,x,4\n")
    with pytest.raises(ValueError) as info:
        read_curve(curve, "train_attention")
    assert str(info.value) == (f"learning curve {curve} line 2 is not numeric (step and tokens whole numbers): "
                               "'1,2,3,x,4': re-run `dvc repro train_attention`")


def test_a_bad_model_setting_names_it_the_value_and_what_is_allowed():
    with pytest.raises(ValueError, match=r"n_embd must be divisible by n_head, got n_embd=10 and n_head=4 "
                                         r"\(allowed n_head: divisors of 10\)$"):
        GPTConfig(**{**PARAMS["model"], "n_embd": 10, "n_head": 4})


@pytest.fixture
def stage(run_stage):
    """``stage(name, args, lang)``: the stage's script under LANG=``lang`` (None: no locale), without the mirror."""

    def run(name: str, args: list[str], lang: str | None) -> subprocess.CompletedProcess:
        environ = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_MESSAGES", fetch.MIRROR_ENV)}
        environ |= {"LANG": lang} if lang else {}
        return run_stage(name, *args, env=environ, cwd=None)

    return run


TINY_MODEL = {"n_layer": 1, "n_head": 2, "n_embd": 16, "block_size": 8}


@pytest.fixture
def train_stage(stage):
    """``train_stage(tmp_path, train, corpus, lang)``: the train stage with the project's params.yaml, a tiny model
    and its train: section changed by ``train``."""

    def run(tmp_path: Path, train: dict, corpus: Path, lang: str | None) -> subprocess.CompletedProcess:
        params = tmp_path / "params.yaml"
        params.write_text(yaml.safe_dump({**PARAMS, "model": {**PARAMS["model"], **TINY_MODEL},
                                          "train": {**PARAMS["train"], **train}}))
        out = tmp_path / "out"
        return stage("train", ["--params", str(params), "--attention", "on", "--data", str(corpus),
                               "--metrics", str(out / "m.json"), "--plot", str(out / "p.csv"),
                               "--model", str(out / "m.pt"), "--config", str(out / "c.json"),
                               "--sample", str(out / "s.txt"), "--no-progress"], lang)

    return run


def test_a_bad_param_stops_the_train_stage_with_one_line(tmp_path, train_stage):
    proc = train_stage(tmp_path, {"lr": -0.1}, tmp_path / "corpus.txt", None)
    assert (proc.returncode, proc.stderr) == (2, "train: train.lr must be positive, got -0.1\n")


@pytest.mark.parametrize("lang", ["pt_BR.UTF-8", None])
def test_a_missing_corpus_stops_the_train_stage_in_english_naming_it_and_the_stage_to_run(tmp_path, lang, train_stage):
    corpus = tmp_path / "corpus.txt"
    proc = train_stage(tmp_path, {}, corpus, lang)
    assert (proc.returncode, proc.stderr) == (2, f"train: corpus {corpus} does not exist: run `dvc repro fetch_data` "
                                                 "first\n")


@pytest.mark.parametrize("lang", ["pt_BR.UTF-8", None])
def test_a_mirror_with_the_wrong_content_fails_the_fetch_stage_in_english(tmp_path, lang, stage):
    mirror, sha = tmp_path / "mirror.txt", "0" * 64
    mirror.write_bytes(b"x" * 12_000)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({**PARAMS, "data": {**PARAMS["data"], "url": str(mirror), "sha256": sha}}))
    proc = stage("fetch_data", ["--params", str(params), "--out", str(tmp_path / "raw.txt"), "--retries", "1"],
                 lang)
    actual = hashlib.sha256(b"x" * 12_000).hexdigest()
    problem = (f"checksum mismatch for file {mirror}: expected sha256 {sha}, got {actual} (12,000 bytes); "
               "the file is not the expected corpus, check the source or data.sha256")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [f"fetch_data: attempt 1/1 from file {mirror} failed: {problem}",
                                        f"fetch_data: {problem}"]
    assert not (tmp_path / "raw.txt").exists()
