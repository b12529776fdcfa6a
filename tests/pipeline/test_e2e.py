"""The whole pipeline, for real: `dvc repro` on a fresh copy of the repository with tiny parameters."""

import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mha.artifacts.attention import ATTENTION_MAPS
from mha.artifacts.lab import ORDER_SENSITIVITY, SCALE_STATISTICS
from mha.artifacts.run import read_curve, read_finished_run
from mha.lab.layout import LabFolders
from mha.machine import DENORMALS_FLUSHED

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the venv's bin: dvc, and the `python` the stages run
TRAIN_STAGES = {"train_attention", "train_no_attention"}
UPSTREAM = {"fetch_data", "verify_example"}
REPORT = "report"
LAB_PAGE = "lab_report"  # the lab's page reads every lab run

TINY = {
    "model": {"n_layer": 1, "n_head": 2, "n_embd": 16, "block_size": 64, "dropout": 0.0,
              "scale_scores": True, "positions": "learned"},
    "train": {"batch_size": 8, "max_iters": 30, "warmup_iters": 5, "lr": 0.01, "min_lr": 0.001,
              "eval_interval": 10, "eval_iters": 2, "checkpoint_interval": 10, "sample_chars": 40, "device": "cpu"},
    "lab": {"seeds": [1, 2],  # two: the fewest a spread needs
            "schedule": {"max_iters": 10, "warmup_iters": 2, "eval_interval": 5, "checkpoint_interval": 5},
            "scale": {"d_ks": [1, 2, 4], "samples": 16, "row_length": 8, "seed": 0},
            "order": {"windows": 4, "seed": 0}},  # lab.runs stays params.yaml's
}


def corpus_mirror() -> str:
    """MHA_DATA_MIRROR as CI sets it, or the verified copy in ../shared that .ci/run points it to."""
    mirror = os.environ.get("MHA_DATA_MIRROR") or str(REPO.parent / "shared" / "data" / "tinyshakespeare" / "input.txt")
    assert "://" in mirror or Path(mirror).exists(), \
        f"set MHA_DATA_MIRROR to a copy of tiny Shakespeare (tried {mirror})"
    return mirror


def tracked_files() -> list[str]:
    """What a fresh clone would hold (plus new, not yet ignored files of a working copy)."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                         capture_output=True, check=True).stdout.decode()
    return [p for p in out.split("\0") if p and (REPO / p).is_file()]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("e2e") / "repo"
    for rel in tracked_files():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)
    (root / "dvc.lock").unlink(missing_ok=True)  # the committed lock is for the full run: start clean
    params = yaml.safe_load((root / "params.yaml").read_text())
    for section, values in TINY.items():
        params[section].update(values)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com"]
    subprocess.run(git + ["init", "-q"], cwd=root, check=True)
    subprocess.run(git + ["add", "-A"], cwd=root, check=True)
    subprocess.run(git + ["commit", "-qm", "copy"], cwd=root, check=True)
    return root


def dvc(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(project / "src"),
           "MHA_DATA_MIRROR": corpus_mirror(), "DVC_NO_ANALYTICS": "1"}
    proc = subprocess.run([str(BIN / "dvc"), *args], cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"dvc {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def params_url(project: Path) -> str:
    """The corpus URL is a parameter, and the report's params table shows it as text (not a link)."""
    return yaml.safe_load((project / "params.yaml").read_text())["data"]["url"]


def ran(proc: subprocess.CompletedProcess) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", proc.stdout + proc.stderr))


@pytest.fixture(scope="module")
def first_repro(project):
    return dvc(project, "repro")


def lab_runs(project: Path) -> dict[str, dict]:
    return yaml.safe_load((project / "params.yaml").read_text())["lab"]["runs"]


def lab_seeds(project: Path) -> list[int]:
    return yaml.safe_load((project / "params.yaml").read_text())["lab"]["seeds"]


def test_every_stage_runs_on_a_fresh_copy(project, first_repro):
    stages = list(yaml.safe_load((project / "dvc.yaml").read_text())["stages"])
    assert stages == ["fetch_data", "verify_example", "train_attention", "train_no_attention", "lab_scale", "lab_train",
                      REPORT, LAB_PAGE]
    # one stage per run and seed (matrix)
    lab_train = {f"lab_train@{name}-{seed}" for name in lab_runs(project) for seed in lab_seeds(project)}
    assert len(lab_train) == 7 * 2 and ran(first_repro) == set(stages) - {"lab_train"} | lab_train


def test_the_report_shows_this_runs_numbers(project, first_repro):
    paths = yaml.safe_load((project / "dvc.yaml").read_text())["vars"][0]["path"]
    page = (project / paths["report"]).read_text()
    assert page.startswith("<!DOCTYPE html>")
    for stage in sorted(TRAIN_STAGES):
        best = json.loads((project / paths[f"{stage}_config"]).read_text())["results"]["best_val_loss"]
        assert f"{best:.4f}" in page
    assert "Life" in page and "awesome" in page  # the worked example's tokens
    assert "http://" not in page and "https://" not in page.replace(params_url(project), "")


def test_training_metrics_and_plots_are_sensible(project, first_repro):
    params = yaml.safe_load((project / "params.yaml").read_text())
    paths = yaml.safe_load((project / "dvc.yaml").read_text())["vars"][0]["path"]
    vocab = len(set((project / paths["data_raw"]).read_text()))
    for stage in sorted(TRAIN_STAGES):
        metrics = json.loads((project / paths[f"{stage}_config"]).read_text())["results"]
        assert metrics["iterations"] == 30 and metrics["tokens_seen"] == 30 * 8 * 64
        for key in ("best_val_loss", "final_val_loss", "final_train_loss"):
            assert math.isfinite(metrics[key]) and 0 < metrics[key] < math.log(vocab)
        rows = list(csv.DictReader((project / paths[f"{stage}_plot"]).open()))
        assert [int(r["step"]) for r in rows] == [0, 10, 20, 30]
        assert float(rows[-1]["val_loss"]) < float(rows[0]["val_loss"]) - 0.3  # the loss went down
        resolved = json.loads((project / paths[f"{stage}_config"]).read_text())
        assert resolved["model"]["attention"] is (stage == "train_attention")
        assert resolved["train"]["max_iters"] == params["train"]["max_iters"]
    heat = json.loads((project / paths["attention_weights"]).read_text())
    assert len(heat["tokens"]) == 64 and len(heat["weights"]) == 1 and len(heat["weights"][0]) == 2

    shown = json.loads(dvc(project, "metrics", "show", "--json").stdout)
    assert json.dumps(shown).count("best_val_loss") >= 2
    table = dvc(project, "metrics", "show").stdout.splitlines()
    assert len(table) == 4 + 7 * 2 and max(map(len, table)) <= 120, "\n".join(table)  # header, 3 files, 7 × 2 runs
    plots = json.loads(dvc(project, "plots", "show", "--json").stdout)
    (chart,) = plots["data"]["val_loss"]  # one chart ... (the lab's runs have their own)
    points = chart["content"]["data"]["values"]
    assert {p["filename"] for p in points} == {Path(paths[f"{s}_plot"]).name for s in TRAIN_STAGES}  # ... both models
    assert len(points) == 2 * 4 and '"y": {"field": "val_loss"' in json.dumps(chart["content"])


@pytest.fixture(scope="module")
def second_repro(project, first_repro):
    """`dvc repro` again, with nothing changed since the first."""
    return dvc(project, "repro")


@pytest.fixture(scope="module")
def max_iters_changed(project, second_repro, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A copy of the up-to-date project with only train.max_iters changed (30 -> 40), and its `dvc repro`.

    A copy, so that the other tests read the first run's outputs whatever order they run in.
    """
    copy = tmp_path_factory.mktemp("e2e_max_iters") / "repo"
    shutil.copytree(project, copy, symlinks=True)
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["train"]["max_iters"] = 40
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return copy, dvc(copy, "repro")


def test_a_second_repro_does_nothing(second_repro):
    assert ran(second_repro) == set()
    assert "Data and pipelines are up to date" in second_repro.stdout


def test_changing_only_max_iters_reruns_only_what_depends_on_training(max_iters_changed):
    copy, proc = max_iters_changed
    assert ran(proc) == TRAIN_STAGES | {REPORT}
    # the persisted checkpoints were for 30 steps: the script says why it does not resume
    assert "train.max_iters 30 -> 40" in proc.stderr + proc.stdout
    paths = yaml.safe_load((copy / "dvc.yaml").read_text())["vars"][0]["path"]
    assert json.loads((copy / paths["train_attention_config"]).read_text())["results"]["iterations"] == 40


def lab_folders(project: Path) -> LabFolders:
    paths = yaml.safe_load((project / "dvc.yaml").read_text())["vars"][0]["path"]
    return LabFolders(*(project / paths[f"lab_{name}"] for name in ("metrics", "plots", "models", "samples",
                                                                      "artifacts")))


def test_each_lab_run_writes_every_file_and_differs_from_the_main_model_only_as_its_entry_says(project, first_repro):
    params = yaml.safe_load((project / "params.yaml").read_text())
    schedule, folders = params["lab"]["schedule"], lab_folders(project)
    main, _ = read_finished_run(project / "models" / "train_attention.json", "train_attention")
    for (name, options), seed in ((run, seed) for run in lab_runs(project).items() for seed in lab_seeds(project)):
        files = folders.run(name, seed)
        record, results = read_finished_run(files.record, f"lab_train@{name}-{seed}")
        assert {k: v for k, v in record.model.items() if main.model[k] != v} == options, name
        assert {k: v for k, v in record.train.items() if main.train[k] != v} == schedule | {"seed": seed}, name
        assert results.iterations == schedule["max_iters"] and record.data == main.data
        assert record.denormals == main.denormals == DENORMALS_FLUSHED  # each stage flushed, on every thread
        assert [row.step for row in read_curve(files.plot, name).rows] == [0, 5, 10]
        assert json.loads(files.metrics.read_text())["best_val_loss"] == results.best_val_loss
        assert files.sample.read_text().startswith(params["train"]["sample_prompt"]) and files.model.stat().st_size
        maps = ATTENTION_MAPS.read(files.attention)
        assert (maps.n_layer, maps.n_head) == (record.model["n_layer"], record.model["n_head"])
        order = ORDER_SENSITIVITY.read(files.order)
        assert (order.windows, order.context) == (4, record.model["block_size"]) and order.loss_in_order > 0
    assert SCALE_STATISTICS.read(folders.scale).d_k == (1, 2, 4)


def test_dvc_shows_each_lab_runs_metrics_and_curve(project, first_repro):
    metrics = json.loads(dvc(project, "metrics", "show", "--json").stdout)
    plots = json.loads(dvc(project, "plots", "show", "--json").stdout)["data"]
    for name, seed in ((name, seed) for name in lab_runs(project) for seed in lab_seeds(project)):
        assert f"metrics/lab/{name}/{seed}.json" in json.dumps(metrics)
        (chart,) = plots[f"plots/lab/{name}/{seed}.csv"]
        assert [p["step"] for p in chart["content"]["data"]["values"]] == ["0", "5", "10"]
        assert '"y": {"field": "val_loss"' in json.dumps(chart["content"])


def test_changing_one_lab_runs_entry_reruns_only_that_run(project, second_repro, tmp_path_factory):
    copy = tmp_path_factory.mktemp("e2e_lab_run") / "repo"
    shutil.copytree(project, copy, symlinks=True)
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["lab"]["runs"]["heads_4"] = {"n_head": 4, "positions": "sinusoidal"}
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    assert ran(dvc(copy, "repro")) - {LAB_PAGE} == {"lab_train@heads_4-1", "lab_train@heads_4-2"}
    for seed in (1, 2):
        record, _ = read_finished_run(lab_folders(copy).run("heads_4", seed).record, f"lab_train@heads_4-{seed}")
        assert (record.model["n_head"], record.model["positions"], record.train["seed"]) == (4, "sinusoidal", seed)
