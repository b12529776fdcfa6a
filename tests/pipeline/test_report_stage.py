"""The `report` stage as people run it: pipeline/report.py on the command line, and `dvc repro`."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
_spec = importlib.util.spec_from_file_location("report_fixtures", FIXTURES / "make_report_fixtures.py")
report_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_fixtures)
BIN = Path(sys.executable).parent
ENV = {**os.environ, "DVC_NO_ANALYTICS": "1", "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
PREVIOUS = "<html>the previous report</html>\n"


@pytest.fixture
def run_report(run_stage):
    """pipeline/report.py on the command line: ``run_report(root, out, params=None, *extra)``."""

    def run(root: Path, out: Path, params: Path | None = None, *extra: str) -> subprocess.CompletedProcess:
        args = [*report_fixtures.cli_args(root), "--out", out, *(["--params", params] if params is not None else [])]
        return run_stage("report", *args, *extra, env=ENV)

    return run


@pytest.fixture
def root(tmp_path) -> Path:
    shutil.copytree(FIXTURES / "report", tmp_path / "in")
    return tmp_path / "in"


@pytest.fixture
def previous(tmp_path) -> Path:
    out = tmp_path / "reports" / "index.html"
    out.parent.mkdir()
    out.write_text(PREVIOUS)
    return out


def assert_refused_cleanly(result: subprocess.CompletedProcess, out: Path, *expected: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    first = result.stderr.splitlines()[0]
    for text in expected:
        assert text in first
    assert out.read_text() == PREVIOUS  # the previous report survives, whole
    assert [p.name for p in out.parent.iterdir()] == ["index.html"]  # and no temp file is left


def test_the_script_renders_the_page_identically_twice(root, tmp_path, run_report):
    first, second = tmp_path / "a" / "index.html", tmp_path / "b" / "index.html"
    result = run_report(root, first)
    assert result.returncode == 0, result.stderr
    assert run_report(root, second).returncode == 0
    assert first.read_bytes() == second.read_bytes()
    html = first.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert f"wrote {first}" in result.stdout and "KiB" in result.stdout


def test_a_missing_input_is_one_line_and_keeps_the_previous_report(root, previous, run_report):
    (root / "artifacts" / "attention_weights.json").unlink()
    result = run_report(root, previous)
    assert_refused_cleanly(result, previous, "attention_weights.json does not exist", "dvc repro train_attention")


def test_a_malformed_input_is_one_line_and_keeps_the_previous_report(root, previous, run_report):
    (root / "models" / "train_attention.json").write_text('{"model": {"n_layer": 2},')
    result = run_report(root, previous)
    assert_refused_cleanly(result, previous, "train_attention.json is not valid JSON")


def test_an_unknown_language_names_the_value_and_the_choices(root, previous, tmp_path, run_report):
    params = tmp_path / "params.yaml"
    params.write_text(params_with_language("fr"))
    result = run_report(root, previous, params)
    assert_refused_cleanly(result, previous, "report.language is 'fr'; allowed: en, pt")


def test_a_broken_template_is_reported_without_a_traceback(root, previous, tmp_path, run_report):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "report.html.j2").write_text("{% for x in %}")
    result = run_report(root, previous, None, "--templates", str(templates))
    assert_refused_cleanly(result, previous, "cannot render the template")


def params_with_language(language: str) -> str:
    """params.yaml with report.language set to ``language``."""
    values = yaml.safe_load((REPO / "params.yaml").read_text())
    values["report"]["language"] = language
    return yaml.safe_dump(values, sort_keys=False)


def test_portuguese_is_chosen_in_params(root, tmp_path, run_report):
    params = tmp_path / "params.yaml"
    params.write_text(params_with_language("pt"))
    out = tmp_path / "pt.html"
    assert run_report(root, out, params).returncode == 0
    assert '<html lang="pt-BR">' in out.read_text() and "A resposta" in out.read_text()


def dvc_stage(name: str) -> dict:
    return yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"][name]


def test_the_report_stages_come_last_and_each_template_is_a_dependency_of_its_page_alone():
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    assert list(stages)[-2:] == ["report", "lab_report"]
    owners = [name for name, stage in stages.items() if "${path.report_templates}" in stage.get("deps", [])]
    assert owners == ["report"]
    lab_template = "${path.report_templates}/lab.html.j2"
    assert [name for name, stage in stages.items() if lab_template in stage.get("deps", [])] == ["lab_report"]


def copy_project(dst: Path) -> None:
    """The pipeline's files, with the fixtures where the training stages would have put their outputs
    (the fixtures use dvc.yaml's layout)."""
    for name in ("dvc.yaml", "dvc.lock", "params.yaml", ".dvcignore"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, dst / name)
    shutil.copytree(REPO / ".dvc", dst / ".dvc", ignore=shutil.ignore_patterns("tmp", "cache"))
    shutil.copytree(REPO / "pipeline", dst / "pipeline", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "src", dst / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copytree(FIXTURES / "report", dst, dirs_exist_ok=True)


def test_dvc_repro_runs_the_report_stage_and_reruns_it_only_when_its_template_changes(tmp_path, dvc):
    project = tmp_path / "project"
    project.mkdir()
    copy_project(project)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    report = project / yaml.safe_load((REPO / "dvc.yaml").read_text())["vars"][0]["path"]["report"]

    dvc(project, "repro", "--single-item", "report", env=ENV, timeout=180)
    first = report.read_bytes()
    assert b"<!DOCTYPE html>" in first
    lock = yaml.safe_load((project / "dvc.lock").read_text())["stages"]["report"]
    assert lock["params"]["params.yaml"]["report"]["language"] == "en"
    paths = yaml.safe_load((REPO / "dvc.yaml").read_text())["vars"][0]["path"]
    expected = {paths[key] for key in ("report_templates", "data_raw", "attention_weights")}
    assert {d["path"] for d in lock["deps"]} >= expected

    assert "report" not in json.loads(dvc(project, "status", "--json", "report", env=ENV, timeout=180).stdout or "{}")
    template = project / "pipeline" / "templates" / "report.html.j2"
    template.write_text(template.read_text().replace("</footer>", "<p>edited</p>\n</footer>"))
    assert "report" in json.loads(dvc(project, "status", "--json", "report", env=ENV, timeout=180).stdout)
    dvc(project, "repro", "--single-item", "report", env=ENV, timeout=180)
    assert report.read_bytes() != first and b"<p>edited</p>" in report.read_bytes()


STAGE_SCRIPT = re.compile(r"^python (pipeline/\w+\.py)\b")


def imported_project_files(script: str) -> set[str]:
    """The modules of this project (under src/ and pipeline/) that loading ``script`` imports, as repository paths."""
    probe = (f"import runpy, sys; runpy.run_path({script!r}, run_name='probe'); "
             "print('\\n'.join(getattr(m, '__file__', None) or '' for m in list(sys.modules.values())))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True,
                         timeout=120).stdout
    files = {Path(line).resolve() for line in out.splitlines() if line}
    return {str(f.relative_to(REPO)) for f in files if any(f.is_relative_to(REPO / d) for d in ("src", "pipeline"))}


def stage_definition(stage: dict) -> dict:
    """A stage's cmd, deps, params and outs: for a `foreach` stage, those of its `do` (one per item)."""
    return stage.get("do", stage)


@pytest.mark.parametrize("name", [n for n, stage in yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"].items()
                                  if STAGE_SCRIPT.match(stage_definition(stage)["cmd"])])
def test_every_module_a_stage_imports_is_a_dependency_of_it(name):
    """dvc re-runs a stage when a dependency changes, so every module its script loads must be one."""
    stage = stage_definition(dvc_stage(name))
    script = STAGE_SCRIPT.match(stage["cmd"]).group(1)
    imported = imported_project_files(script)
    assert "src/mha/__init__.py" in imported  # the probe saw the package's modules
    missing = sorted((imported | {script}) - set(stage["deps"]))
    assert missing == [], f"{name} imports {missing} but dvc.yaml does not list them in its deps"
