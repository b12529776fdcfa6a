"""What the library refuses or reports (mha.errors): a complete catalog, every key it names in it, English
from str() and in LANG's language from the stage that prints it."""

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mha import fetch
from mha.artifacts.run import RUN_RECORD
from mha.errors import ERRORS
from mha.stage_messages import tell

REPO = Path(__file__).resolve().parents[2]
# The lab page words its Messages through the report's catalog, not this one.
LAB_PAGE = REPO / "src" / "mha" / "lab" / "page"
LIBRARY = sorted(p for p in (REPO / "src" / "mha").rglob("*.py") if not p.is_relative_to(LAB_PAGE))

# How the library names a key: a whole key, or the part after the prefix its error class or reader adds.
NAMED = [
    (r"""\b(?:ERRORS\.(?:error|line)|Message)\(\s*"([\w.]+)\"""", ""),
    (r"""\bFetchError\(\s*"(\w+)\"""", "fetch."),
    (r"""\bArtifactError\(\s*"(\w+)\"""", "artifact."),
    (r"""\.error\(\s*"(\w+)\"""", "artifact.problem."),  # Source.error: a dotted key is another catalog's
    (r"""\b(?:JsonArtifact\(\w+|Source\([^"\n]*?), "([^"]+)\"""", "artifact.what."),
]


def named_keys() -> set[str]:
    keys = set()
    for path in LIBRARY:
        source = path.read_text(encoding="utf-8")
        for pattern, prefix in NAMED:
            keys |= {prefix + key for key in re.findall(pattern, source)}
    return keys


def test_the_catalog_is_complete_in_both_languages():
    assert ERRORS.problems() == []
    assert all(texts["en"] != texts["pt"] for texts in ERRORS.entries.values())


def test_every_key_the_library_names_is_in_the_catalog_and_every_entry_is_named():
    assert {"fetch.checksum_mismatch", "artifact.problem.lacks", "artifact.what.run record",
            "config.not_positive", "train.bf16_off_cuda", "verify.cell_mismatch"} <= named_keys()
    assert named_keys() == set(ERRORS.entries)


def test_an_error_keeps_its_type_and_english_text_and_words_itself_in_portuguese(tmp_path):
    with pytest.raises(ValueError) as info:  # ArtifactError is still a ValueError
        RUN_RECORD.read(tmp_path / "run.json", "train_attention")
    error = info.value
    assert str(error) == f"run record {tmp_path / 'run.json'} does not exist: run `dvc repro train_attention` first"
    assert error.text("pt") == (f"o registro da execução {tmp_path / 'run.json'} não existe: "
                                "rode `dvc repro train_attention` antes")


def test_a_stage_line_words_a_library_line_inside_it(capsys, monkeypatch):
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")
    for variable in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    problem = ERRORS.line("verify.disagree", name="sdpa", difference=2.5e-9, tolerance=1e-12)
    tell("verify_example", "verify_example.mismatch", problem=problem)
    assert capsys.readouterr().err == \
        "verify_example: DIVERGÊNCIA a referência e sdpa divergem em 2,500e−09 (tolerância 1e−12)\n"


def stage(script: str, args: list[str], lang: str | None, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_MESSAGES", fetch.MIRROR_ENV)}
    environ |= env | ({"LANG": lang} if lang else {})
    return subprocess.run([sys.executable, str(REPO / "pipeline" / script), *args], capture_output=True, text=True,
                          env=environ, timeout=120)


TINY_MODEL = {"n_layer": 1, "n_head": 2, "n_embd": 16, "block_size": 8, "dropout": 0.0, "scale_scores": True,
              "positions": "learned"}


def train_stage(tmp_path: Path, train: dict, corpus: Path, lang: str | None) -> subprocess.CompletedProcess:
    """The train stage with params.yaml's train: section (every key is needed) changed by ``train``."""
    params = tmp_path / "params.yaml"
    train = {**yaml.safe_load((REPO / "params.yaml").read_text())["train"], **train}
    params.write_text(yaml.safe_dump({"data": {"val_fraction": 0.1}, "model": TINY_MODEL, "train": train}))
    out = tmp_path / "out"
    return stage("train.py", ["--params", str(params), "--attention", "on", "--data", str(corpus),
                              "--metrics", str(out / "m.json"), "--plot", str(out / "p.csv"),
                              "--model", str(out / "m.pt"), "--config", str(out / "c.json"),
                              "--sample", str(out / "s.txt"), "--no-progress"], lang)


@pytest.mark.parametrize(("lang", "expected"), [
    ("pt_BR.UTF-8", "train: train.lr deve ser positivo, mas é -0.1\n"),
    (None, "train: train.lr must be positive, got -0.1\n"),
])
def test_a_bad_param_stops_the_train_stage_with_one_line_in_the_language_of_LANG(tmp_path, lang, expected):
    proc = train_stage(tmp_path, {"lr": -0.1}, tmp_path / "corpus.txt", lang)
    assert (proc.returncode, proc.stderr) == (2, expected)


@pytest.mark.parametrize(("lang", "expected"), [
    ("pt_BR.UTF-8", "o corpus {} não existe: rode `dvc repro fetch_data` antes"),
    (None, "corpus {} does not exist: run `dvc repro fetch_data` first"),
])
def test_a_missing_corpus_stops_the_train_stage_naming_it_and_the_stage_to_run(tmp_path, lang, expected):
    corpus = tmp_path / "corpus.txt"
    proc = train_stage(tmp_path, {}, corpus, lang)
    assert (proc.returncode, proc.stderr) == (2, "train: " + expected.format(corpus) + "\n")


@pytest.mark.parametrize(("lang", "expected"), [
    ("pt_BR.UTF-8", "fetch_data: checksum divergente para o arquivo {path}: sha256 esperado {sha}, obtido {actual} "
                    "(12.000 bytes); o arquivo não é o corpus esperado, confira a origem ou data.sha256"),
    (None, "fetch_data: checksum mismatch for file {path}: expected sha256 {sha}, got {actual} (12,000 bytes); "
           "the file is not the expected corpus, check the source or data.sha256"),
])
def test_a_mirror_with_the_wrong_content_fails_the_fetch_stage_in_the_language_of_LANG(tmp_path, lang, expected):
    mirror, sha = tmp_path / "mirror.txt", "0" * 64
    mirror.write_bytes(b"x" * 12_000)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"data": {"url": str(mirror), "sha256": sha}}))
    proc = stage("fetch_data.py", ["--params", str(params), "--out", str(tmp_path / "raw.txt"), "--retries", "1"],
                 lang)
    line = expected.format(path=mirror, sha=sha, actual=hashlib.sha256(b"x" * 12_000).hexdigest())
    attempt = "a tentativa 1/1 a partir de o arquivo" if lang else "attempt 1/1 from file"
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0].startswith(f"fetch_data: {attempt} {mirror}")  # the retry log's line
    assert proc.stderr.splitlines()[1:] == [line]
    assert not (tmp_path / "raw.txt").exists()
