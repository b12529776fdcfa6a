"""params.yaml is read by one loader: every key of every section required, every unknown key refused, with
one line naming it; and no dataclass holds a default that could disagree with the file."""

from __future__ import annotations

import copy
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mha import params, schema
from mha.schema import DataConfig, GPTConfig, LabConfig, ReportConfig, TrainConfig

REPO = Path(__file__).resolve().parents[2]
PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())
# Each section's key, and how a stage reads it: schema.check_sections for a section, LabConfig for the lab's nested
# ones.
KEYS = [(section, key) for section in schema.SECTIONS for key in PARAMS[section]]
NESTED = [(f"lab.{name}", key) for name in ("schedule", "scale", "order") for key in PARAMS["lab"][name]]


def checked(values: dict) -> None:
    schema.check_sections(values)
    LabConfig.from_params(values)


def without(values: dict, where: str, key: str) -> dict:
    values = copy.deepcopy(values)
    mapping = values
    for part in where.split("."):
        mapping = mapping[part]
    mapping[f"{key}x"] = mapping.pop(key)
    return values


def test_the_repos_params_yaml_passes_and_has_exactly_the_sections_the_loader_knows():
    assert list(PARAMS) == list(schema.SECTIONS)
    checked(schema.load(REPO / "params.yaml"))


@pytest.mark.parametrize(("where", "key"), KEYS + NESTED)
def test_a_deleted_key_is_named_in_one_line(where, key):
    values = copy.deepcopy(PARAMS)
    mapping = values
    for part in where.split("."):
        mapping = mapping[part]
    del mapping[key]
    with pytest.raises(params.ParamsError) as caught:
        checked(values)
    message = str(caught.value)
    assert message.startswith(f"{where}.{key} is missing; {where} needs: ") and "\n" not in message


@pytest.mark.parametrize(("where", "key"), KEYS + NESTED)
def test_a_misspelt_key_is_named_with_the_one_it_resembles(where, key):
    with pytest.raises(params.ParamsError) as caught:
        checked(without(PARAMS, where, key))
    message = str(caught.value)
    assert message.startswith(f"{where}.{key}x is not a known setting (did you mean {where}.{key}?); {where} has: ")


def test_an_unknown_or_missing_section_is_named():
    with pytest.raises(params.ParamsError, match=r"^colour is not a known section; params.yaml has: data, model"):
        schema.check_sections({**PARAMS, "colour": {}})
    values = {k: v for k, v in PARAMS.items() if k != "report"}
    with pytest.raises(params.ParamsError, match=r"^report is missing; params.yaml needs: data, model, train"):
        schema.check_sections(values)
    with pytest.raises(params.ParamsError, match=r"^params.yaml must be a mapping of sections"):
        schema.check_sections([1, 2])


@pytest.mark.parametrize(("text", "expected"), [
    ("model: [1\n", "is not valid YAML"),
    (b"\xff\xfe", "is not UTF-8 text"),
])
def test_an_unreadable_file_is_one_line(tmp_path, text, expected):
    path = tmp_path / "params.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(params.ParamsError, match=expected):
        schema.load(path)
    with pytest.raises(params.ParamsError, match="does not exist"):
        schema.load(tmp_path / "nothing.yaml")


@pytest.mark.parametrize(("config", "section"), [(GPTConfig, "model"), (TrainConfig, "train"), (DataConfig, "data"),
                                                 (ReportConfig, "report")])
def test_no_dataclass_has_a_default_for_a_value_params_yaml_holds(config, section):
    defaults = [f.name for f in dataclasses.fields(config) if f.name in PARAMS[section]
                and (f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING)]
    assert defaults == []


def test_the_schema_imports_neither_torch_nor_matplotlib_nor_jinja2():
    """Asking for the report's keys, or checking the whole file, needs none of the heavy libraries (fetch_data and
    a tool reading the schema start in a moment): mha.schema sits under them, not above."""
    probe = ("import sys; from mha import schema; values = schema.load(sys.argv[1]); schema.check_sections(values); "
             "schema.LabConfig.from_params(values); schema.report_config(values); schema.resolve(values); "
             "print(schema.REPORT_KEYS); print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    result = subprocess.run([sys.executable, "-c", probe, str(REPO / "params.yaml")], capture_output=True, text=True,
                            check=True, timeout=60)
    report_keys, imported = result.stdout.splitlines()
    assert report_keys == "('language', 'bigram_k')"
    assert {"torch", "matplotlib", "jinja2"}.isdisjoint(imported.split()), imported
    assert {"mha", "yaml"} <= set(imported.split())  # the probe did import what it asked for


@pytest.mark.parametrize(("settings", "message"), [
    ({"n_head": 3}, "model.n_embd must be divisible by n_head, got n_embd=64 and n_head=3 (allowed n_head: divisors "
                    "of 64)"),
    ({"n_layer": True}, "model.n_layer must be int, got True (bool)"),
    ({"n_layer": 0}, "model.n_layer must be a positive integer, got 0"),
    ({"dropout": 1.0}, "model.dropout must be in [0, 1), got 1.0"),
    ({"positions": "rotary"}, "model.positions must be one of learned, sinusoidal, none, got 'rotary'"),
])
def test_a_bad_model_value_is_named_as_params_yaml_names_it(settings, message):
    """The model: section is checked by the schema, whose messages name params.yaml's keys (nothing rewritten from
    GPTConfig's): the same line from params.yaml and from a benchmark's or a test's GPTConfig."""
    with pytest.raises(params.ParamsError) as caught:
        schema.resolve({**PARAMS, "model": {**PARAMS["model"], "n_embd": 64, **settings}})
    assert str(caught.value) == message
    with pytest.raises(params.ParamsError, match=re.escape(message)):
        GPTConfig(**{**PARAMS["model"], "n_embd": 64, **settings})


# Each stage script that reads params.yaml, its arguments, and a section it reads.
def stage_arguments(tmp: Path) -> dict[str, tuple[list[str], str, str]]:
    lab_folders = [f"--{name}" for name in ("metrics", "plots", "models", "samples", "artifacts")]
    lab = [arg for flag in lab_folders for arg in (flag, str(tmp / flag[2:]))]
    run = ["--metrics", "m.json", "--plot", "p.csv", "--model", "m.pt", "--config", "c.json", "--sample", "s.txt"]
    paths = [tmp / "out" / p if not p.startswith("--") else p for p in run]
    report_runs = [arg for prefix in ("attention", "no-attention") for field in ("plots", "samples", "config")
                   for arg in (f"--{prefix}-{field}", str(tmp / "missing"))]
    return {
        "fetch_data": (["--out", str(tmp / "out" / "corpus.txt")], "data", "sha256"),
        "train": (["--attention", "on", "--data", str(tmp / "missing.txt"), *map(str, paths)], "train", "lr"),
        "lab_train": (["--run", "reference", "--seed", "1337", "--data", str(tmp / "missing.txt"), *lab],
                      "lab.schedule", "max_iters"),
        "lab_scale": (lab, "lab.scale", "samples"),
        "report": ([*report_runs, "--attention-weights", "a", "--worked-example-matrices", "w", "--corpus", "c",
                    "--out", str(tmp / "out" / "index.html")], "report", "bigram_k"),
        "lab_report": ([*lab, "--out", str(tmp / "out" / "lab.html")], "report", "language"),
    }


@pytest.mark.parametrize("stage", ["fetch_data", "train", "lab_train", "lab_scale", "report", "lab_report"])
def test_every_stage_stops_in_one_line_naming_a_misspelt_key_and_writes_nothing(tmp_path, stage, run_stage):
    arguments, where, key = stage_arguments(tmp_path)[stage]
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(without(PARAMS, where, key), sort_keys=False))
    result = run_stage(stage, "--params", params_file, *arguments, cwd=tmp_path)
    assert result.returncode == params.EXIT_REFUSED, result.stderr
    assert result.stderr.startswith(f"{stage}: nothing written: {where}.{key}x is not a known setting" if stage ==
                                    "lab_scale" else f"{stage}: {where}.{key}x is not a known setting"), result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) <= 2  # the report's: nothing written
    assert not (tmp_path / "out").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["params.yaml"]
