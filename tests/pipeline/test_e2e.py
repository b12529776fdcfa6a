"""The whole pipeline, for real: `dvc repro` on a fresh copy of the repository with tiny parameters."""

import csv
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from mha.artifacts.attention import ATTENTION_MAPS
from mha.artifacts.lab import ORDER_SENSITIVITY, SCALE_STATISTICS
from mha.artifacts.run import read_curve, read_finished_run
from mha.artifacts.runlog import RUN_LOG, run_log_path
from mha.lab.layout import LabFolders
from mha.machine import DENORMALS_FLUSHED, cpu_model
from mha.repro import duration

REPO = Path(__file__).resolve().parents[2]
PIPELINE_DOC = REPO / "docs" / "pipeline.md"  # the page that states what these tests check
BIN = Path(sys.executable).parent  # the venv's bin: dvc, and the `python` the stages run
TRAIN_STAGES = {"train_attention", "train_no_attention"}
UPSTREAM = {"fetch_data", "verify_example"}
REPORT = "report"
LAB_PAGE = "lab_report"  # the lab's page reads every lab run
# The first test that reads the outputs waits for a whole `dvc repro` (its own limit is 900 s): above the default.
pytestmark = pytest.mark.timeout(1800)

TINY = {
    "model": {"n_layer": 1, "n_head": 2, "n_embd": 16, "block_size": 64, "dropout": 0.0,
              "scale_scores": True, "positions": "learned"},
    "train": {"batch_size": 8, "max_iters": 30, "warmup_iters": 5, "lr": 0.01, "min_lr": 0.001,
              "eval_interval": 10, "eval_iters": 2, "checkpoint_interval": 10, "sample_chars": 40, "device": "cpu"},
    # lab.seeds stays params.yaml's too: dvc.yaml's lab_val_loss chart names each run's and seed's curve
    "lab": {"schedule": {"max_iters": 10, "warmup_iters": 2, "eval_interval": 5, "checkpoint_interval": 5},
            "scale": {"d_ks": [1, 2, 4], "samples": 16, "row_length": 8, "seed": 0},
            "order": {"windows": 4, "seed": 0},
            "cost": {"lengths": [8, 16, 32], "batch": 2, "repeats": 1, "seed": 0}},  # lab.runs stays params.yaml's
}


def assert_the_pipeline_page_says(sentence: str) -> None:
    """What a test has just shown is stated on docs/pipeline.md (whatever its line breaks)."""
    assert sentence in " ".join(PIPELINE_DOC.read_text().split()), f"docs/pipeline.md no longer says: {sentence}"


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


@pytest.fixture(scope="module")
def dvc(dvc):
    """conftest's ``dvc(project, *args)``, in the environment the stages need (``stage_env``)."""

    def run(project: Path, *args: str) -> subprocess.CompletedProcess:
        return dvc(project, *args, env=stage_env(project))

    return run


def params_url(project: Path) -> str:
    """The corpus URL is a parameter, and the report's params table shows it as text (not a link)."""
    return yaml.safe_load((project / "params.yaml").read_text())["data"]["url"]


def ran(proc: subprocess.CompletedProcess) -> set[str]:
    return stages_run(proc.stdout + proc.stderr)


def stages_run(output: str) -> set[str]:
    """The stages dvc's ``output`` says it ran."""
    return set(re.findall(r"Running stage '([^']+)'", output))


@pytest.fixture(scope="module")
def second_machine(project, tmp_path_factory) -> Iterator[tuple[Path, subprocess.Popen]]:
    """Another machine's clone of the same commit (no outputs, no DVC cache, another absolute path), its whole
    `dvc repro` started at once and left to run beside the first (at these sizes one keeps about one core busy:
    87 s of CPU in 95 s alone): the reproduction test waits for it."""
    clone = tmp_path_factory.mktemp("e2e_second_machine") / "repo"
    subprocess.run(["git", "clone", "-q", str(project), str(clone)], check=True, timeout=120)
    with (clone.parent / "repro.log").open("w") as log:
        proc = subprocess.Popen([str(BIN / "dvc"), "repro"], cwd=clone, env=stage_env(clone), stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    yield clone, proc
    if proc.poll() is None:  # a test failed before waiting for it
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="module")
def first_repro(project, dvc, second_machine):
    return dvc(project, "repro")


def lab_runs(project: Path) -> dict[str, dict]:
    return yaml.safe_load((project / "params.yaml").read_text())["lab"]["runs"]


def lab_seeds(project: Path) -> list[int]:
    return yaml.safe_load((project / "params.yaml").read_text())["lab"]["seeds"]


def test_every_stage_runs_on_a_fresh_copy(project, first_repro):
    stages = list(yaml.safe_load((project / "dvc.yaml").read_text())["stages"])
    assert stages == ["fetch_data", "verify_example", "train_attention", "train_no_attention", "lab_scale", "lab_cost",
                      "lab_train", REPORT, LAB_PAGE]
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


def test_training_metrics_and_plots_are_sensible(project, first_repro, dvc):
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
    runs = len(lab_runs(project)) * len(lab_seeds(project))
    assert len(table) == 4 + runs and max(map(len, table)) <= 120, "\n".join(table)  # header, 3 files, lab runs
    plots = json.loads(dvc(project, "plots", "show", "--json").stdout)
    (chart,) = plots["data"]["val_loss"]  # one chart ... (the lab's runs have their own)
    points = chart["content"]["data"]["values"]
    assert {p["filename"] for p in points} == {Path(paths[f"{s}_plot"]).name for s in TRAIN_STAGES}  # ... both models
    assert len(points) == 2 * 4 and '"y": {"field": "val_loss"' in json.dumps(chart["content"])


@pytest.fixture(scope="module")
def second_repro(project, first_repro, dvc):
    """`dvc repro` again, with nothing changed since the first."""
    return dvc(project, "repro")


@pytest.fixture(scope="module")
def max_iters_changed(project, second_repro, tmp_path_factory, dvc) -> tuple[Path, subprocess.CompletedProcess]:
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
    assert_the_pipeline_page_says("changing `train.max_iters` re-runs no lab run "
                                  "(only the two main runs and the report)")
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
        assert {**main.train, **schedule, "seed": seed} == record.train, name  # the schedule and its seed, nothing else
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


def test_dvc_shows_each_lab_runs_metrics_and_curve(project, first_repro, dvc):
    metrics = json.loads(dvc(project, "metrics", "show", "--json").stdout)
    plots = json.loads(dvc(project, "plots", "show", "--json").stdout)["data"]
    (chart,) = plots["lab_val_loss"]  # every run and seed on one chart, on shared axes
    values = chart["content"]["data"]["values"]
    assert '"y": {"field": "val_loss"' in json.dumps(chart["content"])
    runs = [(name, seed) for name in lab_runs(project) for seed in lab_seeds(project)]
    for name, seed in runs:
        assert f"metrics/lab/{name}/{seed}.json" in json.dumps(metrics)
    # one line per run and seed, each told apart in the legend, each with the whole curve
    lines = {}
    for point in values:
        lines.setdefault(point["filename"], []).append(point["step"])
    assert len(lines) == len(runs) and all(steps == ["0", "5", "10"] for steps in lines.values()), lines


def test_changing_one_lab_runs_entry_reruns_only_that_run(project, second_repro, tmp_path_factory, dvc):
    copy = tmp_path_factory.mktemp("e2e_lab_run") / "repo"
    shutil.copytree(project, copy, symlinks=True)
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["lab"]["runs"]["heads_4"] = {"n_head": 4, "positions": "sinusoidal"}
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    seeds = lab_seeds(copy)
    assert ran(dvc(copy, "repro")) - {LAB_PAGE} == {f"lab_train@heads_4-{seed}" for seed in seeds}
    assert_the_pipeline_page_says("changing one entry of `lab.runs` re-runs that run's seeds alone")
    for seed in seeds:
        record, _ = read_finished_run(lab_folders(copy).run("heads_4", seed).record, f"lab_train@heads_4-{seed}")
        assert (record.model["n_head"], record.model["positions"], record.train["seed"]) == (4, "sinusoidal", seed)


# A newcomer's paths: a killed stage, a remote round trip, the documented experiments, a language change with the
# progress lines, `dvc plots show` offline.

def copy_of(project: Path, tmp_path_factory, name: str) -> Path:
    copy = tmp_path_factory.mktemp(name) / "repo"
    shutil.copytree(project, copy, symlinks=True)
    return copy


def git(root: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *args]
    return subprocess.run(cmd, cwd=root, check=True, capture_output=True, text=True).stdout


def set_params(root: Path, section: str, **values) -> None:
    params = yaml.safe_load((root / "params.yaml").read_text())
    params[section].update(values)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def stage_env(root: Path) -> dict[str, str]:
    """The environment the stages of the copy at ``root`` need: this venv first on PATH, the copy's own src, the
    corpus mirror. Two reproductions run side by side here (``second_machine``), each stage with its two torch
    threads: OpenMP's idle threads then wait asleep, not spinning on the core the other one needs (it changes no
    number: measured, the two together 72 s instead of one alone's 94 s)."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(root / "src"),
            "MHA_DATA_MIRROR": corpus_mirror(), "DVC_NO_ANALYTICS": "1", "COLUMNS": "120",
            "OMP_WAIT_POLICY": "PASSIVE"}


def test_a_stage_killed_mid_run_deletes_no_tracked_file(project, second_repro, tmp_path_factory):
    copy = copy_of(project, tmp_path_factory, "e2e_killed")
    git(copy, "add", "-A")
    git(copy, "commit", "-qm", "a full tiny run")
    set_params(copy, "train", max_iters=3000)  # long enough to be killed mid-run
    log = copy / "repro.log"
    with log.open("w") as out:
        proc = subprocess.Popen([str(BIN / "dvc"), "repro", "train_attention"], cwd=copy, env=stage_env(copy),
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 240
            while "checkpoint: step 20 saved" not in log.read_text() and proc.poll() is None:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            assert proc.poll() is None, f"the stage ended before it could be killed:\n{log.read_text()}"
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: dvc and the stage it runs
            proc.wait()
    status = git(copy, "status", "--porcelain", "--untracked-files=no").splitlines()
    assert [line for line in status if line[:2].strip() == "D"] == [], status
    assert (copy / "metrics" / "train_attention.json").exists() and (copy / "plots" / "train_attention.csv").exists()


def lock_outputs(root: Path) -> list[str]:
    """Every file dvc.lock hashes as a stage's output (a folder's files included), relative to ``root``."""
    lock = yaml.safe_load((root / "dvc.lock").read_text())
    files = []
    for out in sorted({out["path"] for stage in lock["stages"].values() for out in stage.get("outs", [])}):
        path = root / out
        found = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
        files += [str(f.relative_to(root)) for f in found]
    return files


def test_a_second_machine_reproducing_the_committed_results_leaves_git_clean(project, second_repro, second_machine,
                                                                              tmp_path_factory):
    """The tiny run's results committed; a fresh clone (no outputs, no DVC cache, another absolute path) runs every
    stage again: every output comes out byte for byte, so dvc.lock and every file git holds are the committed ones.
    The machine's figures are in the run logs, which git ignores, and `make repro`'s estimates come from them."""
    first = copy_of(project, tmp_path_factory, "e2e_first_machine")
    git(first, "add", "-A")
    git(first, "commit", "-qm", "a full tiny run")
    second, proc = second_machine
    assert proc.wait(timeout=900) == 0, (second.parent / "repro.log").read_text()[-3000:]
    stages = set(yaml.safe_load((first / "dvc.lock").read_text())["stages"])
    assert stages_run((second.parent / "repro.log").read_text()) == stages  # every stage, lab runs too: no cache

    outputs = lock_outputs(first)
    assert len(outputs) > 100 and lock_outputs(second) == outputs
    differ = [rel for rel in outputs if (second / rel).read_bytes() != (first / rel).read_bytes()]
    assert differ == [], f"outputs that differ between two reproductions: {differ}"
    # the clone taken to the committed results (its checkout as it is): nothing git holds differs, nothing is new
    git(second, "fetch", "-q", str(first), "HEAD")
    git(second, "reset", "-q", "FETCH_HEAD")
    assert git(second, "status", "--porcelain") == "", git(second, "diff", "--stat")
    # and nothing of the machine or the checkout in them: the same CPU here, so dvc.lock alone would not tell
    cpu, here = cpu_model().encode(), str(second).encode()
    assert [rel for rel in outputs if cpu in (second / rel).read_bytes() or here in (second / rel).read_bytes()] == []

    # the run logs instead: one per training run, finished, none of them in git (`git status` above)
    paths = yaml.safe_load((second / "dvc.yaml").read_text())["vars"][0]["path"]
    records = [paths[f"{stage}_config"] for stage in sorted(TRAIN_STAGES)]
    lab = lab_folders(Path())  # relative to the checkout, as the stages name them
    records += [str(lab.run(name, seed).record) for name in lab_runs(second) for seed in lab_seeds(second)]
    logs = {record: RUN_LOG.read(run_log_path(record, second)) for record in records}
    assert len(logs) == 2 + 7 * len(lab_seeds(second))
    assert all(log.finished and log.cpu == cpu_model() for log in logs.values())

    # `make repro` estimates each training stage from its run log (this clone has no times of its own)
    assert not (second / ".dvc" / "tmp" / "stage_seconds.json").exists()
    set_params(second, "train", max_iters=40)
    proc = subprocess.run([str(BIN / "python"), "-m", "mha.repro"], cwd=second, env=stage_env(second),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for stage in sorted(TRAIN_STAGES):
        estimate = duration(logs[paths[f"{stage}_config"]].wall_seconds)
        assert f": {stage} (about {estimate};" in proc.stdout, proc.stdout
    assert RUN_LOG.read(run_log_path(paths["train_attention_config"], second)).step == 40  # and wrote its own


def test_a_remote_round_trip_gives_a_fresh_clone_everything(project, second_repro, tmp_path_factory, dvc):
    """The README's push, fresh clone, pull: `dvc status` clean and `dvc repro` runs nothing (a local remote)."""
    push, pull = doc_block("## Results without training", REPO / "README.md")
    copy = copy_of(project, tmp_path_factory, "e2e_remote")
    store = copy.parent / "store"
    push = push.replace("/shared/or/s3/path", str(store))
    assert push.startswith("dvc remote add") and pull == "dvc pull", (push, pull)
    proc = subprocess.run(push, shell=True, cwd=copy, env=stage_env(copy), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{push}:\n{proc.stdout}\n{proc.stderr}"
    git(copy, "add", "-A")
    git(copy, "commit", "-qm", "results and the remote")
    clone = copy.parent / "clone"
    subprocess.run(["git", "clone", "-q", str(copy), str(clone)], check=True, timeout=120)
    assert not (clone / "models" / "train_attention.pt").exists()
    dvc(clone, *pull.split()[1:])
    assert (clone / "reports" / "index.html").read_bytes() == (copy / "reports" / "index.html").read_bytes()
    assert (clone / "reports" / "lab.html").exists() and (clone / "models" / "train_attention.pt").exists()
    assert "Data and pipelines are up to date" in dvc(clone, "status").stdout
    assert ran(dvc(clone, "repro")) == set()


def doc_block(heading: str, doc: Path = PIPELINE_DOC) -> list[str]:
    """The commands of the first ```sh block after ``heading`` in ``doc``, comments stripped."""
    text = doc.read_text()
    block = text[text.index(heading):].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_documented_experiment_commands_run_on_a_cpu_and_leave_no_stage_of_the_main_run_stale(
        project, second_repro, tmp_path_factory, dvc):
    copy = copy_of(project, tmp_path_factory, "e2e_exp")
    git(copy, "add", "-A")
    git(copy, "commit", "-qm", "a full tiny run")
    commands = doc_block("### Experiments")
    assert any(c.startswith("dvc exp run") for c in commands) and not any("cuda" in c for c in commands)
    outputs = {}
    for command in commands:
        proc = subprocess.run(command, shell=True, cwd=copy, env=stage_env(copy), capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, f"{command}:\n{proc.stdout}\n{proc.stderr}"
        outputs[command] = proc
    runs = [c for c in commands if c.startswith("dvc exp run")]
    for command in runs:  # a main-run sweep retrains no lab run
        assert not {s for s in ran(outputs[command]) if s.startswith("lab")}, command
    # the workspace holds the last experiment whole: its params, both runs and the report, nothing stale
    status = dvc(copy, "status", "--json").stdout
    stale = set(json.loads(status))
    assert not stale & (TRAIN_STAGES | {REPORT}), status
    page = (copy / "reports" / "index.html").read_text()
    record = json.loads((copy / "models" / "train_attention.json").read_text())
    assert f"{record['results']['best_val_loss']:.4f}" in page
    shown = outputs[next(c for c in commands if "exp_show" in c or "exp-show" in c)].stdout.splitlines()
    assert len(shown) >= 3 and max(map(len, shown)) <= 120 and "…" not in "".join(shown), shown
    assert shown[0].split()[2:4] == ["attention", "no_attention"] and "train.lr" in shown[0]


def test_a_language_change_rerenders_both_pages_with_a_progress_line_per_stage(project, second_repro,
                                                                                  tmp_path_factory):
    copy = copy_of(project, tmp_path_factory, "e2e_language")
    set_params(copy, "report", language="pt")
    proc = subprocess.run([str(BIN / "python"), "-m", "mha.repro"], cwd=copy, env=stage_env(copy),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ran(proc) == {REPORT, LAB_PAGE}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("repro: stage")]
    assert [line.split(":")[1] for line in lines] == [" stage 1 of 2", " stage 2 of 2"], proc.stdout
    assert all("left" in line or "unknown" in line for line in lines)
    assert "Use `dvc push`" not in proc.stdout  # no remote: the hint says what to do instead
    assert '<html lang="pt' in (copy / "reports" / "index.html").read_text()
    assert_the_pipeline_page_says("run `make repro` (`report` and `lab_report` re-run)")


def test_the_documented_metrics_example_has_this_pipelines_columns_and_files(project, first_repro, dvc):
    text = PIPELINE_DOC.read_text()
    example = text[text.index("$ dvc metrics show\n"):].split("```", 1)[0].splitlines()[1:]
    shown = dvc(project, "metrics", "show").stdout.splitlines()
    assert example[0].split() == shown[0].split()  # the header
    assert [line.split()[0] for line in example[1:]] == [line.split()[0] for line in shown[1:]]


def test_the_lab_chart_draws_every_run_of_lab_runs(project):
    plot = next(p for p in yaml.safe_load((project / "dvc.yaml").read_text())["plots"] if "lab_val_loss" in p)
    files = list(plot["lab_val_loss"]["y"])
    runs = [(name, seed) for name in lab_runs(project) for seed in lab_seeds(project)]
    assert files == [f"${{path.lab_plots}}/{name}/{seed}.csv" for name, seed in runs]


def test_dvc_plots_show_draws_every_curve_with_the_network_off(project, first_repro, dvc):
    from playwright.sync_api import sync_playwright

    template = REPO / ".venv" / "share" / "dvc-plots.html"
    assert template.exists(), f"{template} is missing: run `make setup`"
    venv_share = project / ".venv" / "share"  # .dvc/config names it relative to .dvc, as in a checkout
    venv_share.parent.mkdir(exist_ok=True)
    venv_share.unlink(missing_ok=True)
    venv_share.symlink_to(template.parent)
    dvc(project, "plots", "show")
    page_file = project / "dvc_plots" / "index.html"
    assert "cdn.jsdelivr" not in page_file.read_text()
    series = 2 + len(lab_runs(project))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        requests = []
        page.route("**/*", lambda route: (requests.append(route.request.url),
                                          route.continue_() if route.request.url.startswith(("file:", "data:"))
                                          else route.abort()))
        page.goto(page_file.as_uri(), wait_until="load")
        page.wait_for_function("window.vegaViews && window.vegaViews.length >= 2", timeout=60_000)
        lines = page.evaluate("document.querySelectorAll('.vega-embed svg g.mark-line path').length")
        browser.close()
    assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
    assert lines >= series, (lines, series)
