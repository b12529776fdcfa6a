"""The lab's stages as dvc.yaml declares them: the files mha.lab.layout names, the params each run reads, and
no lab stage behind the main report. (test_e2e.py runs them for real.)"""

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mha.artifacts.lab import SCALE_STATISTICS
from mha.lab.layout import LabFolders
from mha.schema import DATA_KEYS, LAB_TRAIN_KEYS, MODEL_KEYS, TRAIN_KEYS

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the venv's: dvc
DVC_YAML = yaml.safe_load((REPO / "dvc.yaml").read_text())
PATHS = DVC_YAML["vars"][0]["path"]
STAGES = DVC_YAML["stages"]
PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())
RUN, SEED = "${item.run}", "${item.seed}"  # the matrix stage's run name and seed


def substituted(entry: str | dict) -> str:
    """A dvc.yaml out, metric or plot entry's path with ${path.*} filled in (${key} left as it is)."""
    path = entry if isinstance(entry, str) else next(iter(entry))
    for name, value in PATHS.items():
        path = path.replace(f"${{path.{name}}}", value)
    return path


def folders() -> LabFolders:
    return LabFolders(*(Path(PATHS[f"lab_{name}"]) for name in ("metrics", "plots", "models", "samples", "artifacts")))


def test_each_lab_run_writes_the_files_mha_lab_layout_names_and_nothing_else():
    run = STAGES["lab_train"]
    declared = {substituted(entry) for group in ("outs", "metrics") for entry in run[group]}
    files = folders().run(RUN, SEED)
    outputs = set(files.__dataclass_fields__) - {"run_log"}
    assert declared == {str(getattr(files, name)) for name in outputs}
    # and its run log, under runs/, which no stage declares: it differs on every machine (mha.artifacts.runlog)
    assert files.run_log == Path("runs") / files.record and not any(p.startswith("runs/") for p in declared)
    assert [substituted(entry) for entry in STAGES["lab_scale"]["outs"]] == [str(folders().scale)]


def test_the_main_training_stages_track_every_param_they_read():
    """Both main runs read every key of train: and model: and the data split (mha.schema.resolve): a key missing
    here would let DVC call a run up to date after params.yaml changed it."""
    expected = ({"data.val_fraction"} | {f"model.{k}" for k in MODEL_KEYS} | {f"train.{k}" for k in TRAIN_KEYS})
    for stage in ("train_attention", "train_no_attention"):
        tracked = set(STAGES[stage]["params"])
        assert expected <= tracked, f"{stage} misses {sorted(expected - tracked)}"


def test_each_lab_run_tracks_exactly_the_params_it_reads():
    """Every key of data:, model: and train: that lab_run_config keeps, and the lab's sections of this run (its seed
    is on its command line)."""
    expected = ({f"data.{k}" for k in DATA_KEYS} | {f"model.{k}" for k in MODEL_KEYS}
                | {f"train.{k}" for k in TRAIN_KEYS if k not in LAB_TRAIN_KEYS}
                | {"lab.schedule", f"lab.runs.{RUN}", "lab.order"})
    assert set(STAGES["lab_train"]["params"]) == expected
    assert f"--run {RUN} --seed {SEED}" in STAGES["lab_train"]["cmd"]
    assert STAGES["lab_scale"]["params"] == ["lab.scale"]


def test_lab_runs_run_over_params_yaml_s_runs_and_seeds_and_keep_their_curve_and_metrics_in_git():
    run = STAGES["lab_train"]
    assert run["matrix"] == {"run": "${lab.runs}", "seed": "${lab.seeds}"}
    (metric,) = run["metrics"]
    (plot,) = [out for out in run["outs"] if isinstance(out, dict) and next(iter(out)).endswith(".csv")]
    # in git, and kept by DVC when the stage starts, so a killed run leaves the last ones whole
    assert metric[next(iter(metric))] == {"cache": False, "persist": True}
    assert plot[next(iter(plot))] == {"cache": False, "persist": True}
    # drawn with every other run's on one chart (the top-level plot lab_val_loss)


def test_the_main_report_does_not_wait_for_the_lab():
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    dag = subprocess.run([str(BIN / "dvc"), "dag", "--dot", "report"], cwd=REPO, env=env, capture_output=True,
                         text=True, check=True, timeout=120).stdout
    assert '"train_attention"' in dag and '"report"' in dag  # the report's own ancestors are there
    assert "lab_" not in dag


def run_script(script: str, params: dict, out: Path, *extra: str) -> subprocess.CompletedProcess:
    """pipeline/<script> with ``params`` as its params file and every lab folder under ``out``."""
    (out / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    folders = [arg for name in ("metrics", "plots", "models", "samples", "artifacts")
               for arg in (f"--{name}", out / name)]
    env = {**os.environ, "LANG": "en_US.UTF-8", "LC_ALL": ""}
    return subprocess.run([sys.executable, str(REPO / "pipeline" / script), "--params", str(out / "params.yaml"),
                           *map(str, folders), *extra], capture_output=True, text=True, cwd=out, env=env, timeout=120)


def lab_params(section: str, **values) -> dict:
    params = copy.deepcopy(PARAMS)
    params["lab"][section].update(values)
    return params


def test_lab_scale_writes_the_statistics_of_lab_scale(tmp_path):
    result = run_script("lab_scale.py", lab_params("scale", d_ks=[1, 8], samples=4, row_length=3), tmp_path)
    assert result.returncode == 0, result.stderr
    statistics = SCALE_STATISTICS.read(tmp_path / "artifacts" / "scale.json")
    assert (statistics.d_k, statistics.samples, statistics.row_length) == ((1, 8), 4, 3)
    assert result.stdout == f"lab_scale: wrote {tmp_path / 'artifacts' / 'scale.json'}: the scale's statistics " \
                            "for 2 values of d_k, 1 to 8\n"


@pytest.mark.parametrize(("script", "params", "extra", "expected"), [
    ("lab_scale.py", lab_params("scale", samples=1), (), "lab_scale: nothing written: samples must be an integer"),
    ("lab_scale.py", lab_params("scale", seed="x"), (), "lab_scale: nothing written: "),
    ("lab_scale.py", lab_params("scale", rows=3), (),
     "lab.scale.rows is not a known setting; lab.scale has: d_ks, samples"),
    ("lab_train.py", PARAMS, ("--run", "heads_3", "--seed", "1337"),
     "lab_train: lab.runs has no run 'heads_3'; the runs are: reference"),
    ("lab_train.py", lab_params("runs", heads_3={"n_head": 3}), ("--run", "heads_3", "--seed", "1337"),
     "model.n_embd must be divisible by n_head"),
    ("lab_train.py", PARAMS, ("--run", "reference", "--seed", "42"), "lab_train: lab.seeds has no seed 42"),
])
def test_a_bad_lab_section_stops_the_stage_in_one_line_with_nothing_written(tmp_path, script, params, extra,
                                                                             expected):
    result = run_script(script, params, tmp_path, "--data", "missing.txt", *extra) if script == "lab_train.py" \
        else run_script(script, params, tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1 and expected in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["params.yaml"]
