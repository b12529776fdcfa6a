"""The Gradescope bundle, unzipped and run as Gradescope would, with its paths redirected to a temp dir.

setup.sh installs the pinned requirements and the bundle's wheel; here the requirements come from this
venv (wheel_venv), the wheel from the bundle, and run_autograder runs with no PYTHONPATH.
"""

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

from grader.cases import DEFAULT_SEED

from .conftest import SUBMISSIONS, run_grader


def build(tmp_path: Path, *extra) -> Path:
    tmp_path.mkdir(exist_ok=True)
    out = tmp_path / "autograder.zip"
    proc = run_grader("bundle", "--out", out, *extra)
    assert proc.returncode == 0, proc.stderr
    source = tmp_path / "source"
    with zipfile.ZipFile(out) as zf:
        zf.extractall(source)
        for info in zf.infolist():  # zipfile drops the executable bit; Gradescope's unzip keeps it
            if info.external_attr >> 16 & 0o111:
                os.chmod(source / info.filename, 0o755)
    return source


def install(source: Path, wheel_venv) -> Path:
    """What setup.sh does, minus the requirements: the bundle's own wheel into a fresh venv."""
    (wheel,) = source.glob("mha_course-*.whl")
    return wheel_venv(wheel)


def run_autograder(source: Path, submission: Path, results: Path, python: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "GRADER_SUBMISSION_DIR": str(submission), "GRADER_RESULTS_DIR": str(results),
           "GRADER_PYTHON": str(python), "GRADER_LANG": "en"}
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(source / "run_autograder")], capture_output=True, text=True, env=env, timeout=120,
                          cwd=source.parent)


def test_bundle_grades_the_submission_into_results_json(tmp_path, repo, wheel_venv):
    source = build(tmp_path)
    assert (source / "requirements.txt").read_text() == (repo / "requirements.txt").read_text()
    assert subprocess.run(["bash", "-n", str(source / "setup.sh")]).returncode == 0
    assert "-r requirements.txt" in (source / "setup.sh").read_text() and "./*.whl" in (source / "setup.sh").read_text()
    assert "PYTHONPATH" not in (source / "run_autograder").read_text()
    assert not (source / "grader").exists() and not (source / "src").exists()  # only the wheel carries the code
    python = install(source, wheel_venv)
    submission, results = tmp_path / "submission", tmp_path / "results"
    submission.mkdir()
    shutil.copy(SUBMISSIONS / "mistake_heads_share_weights.py", submission / "student.py")
    proc = run_autograder(source, submission, results, python)
    assert proc.returncode == 0, proc.stderr
    result = json.loads((results / "results.json").read_text())
    assert 0 < result["score"] < 30
    assert result["extra_data"]["mistakes"] == ["heads-share-weights"]


def test_bundle_uses_its_own_rubric_and_a_missing_file_still_gives_results(tmp_path, wheel_venv):
    rubric = tmp_path / "rubric.toml"
    rubric.write_text("[multi_head_attention]\nhidden = 13\n")
    source = build(tmp_path, "--rubric", rubric)
    python = install(source, wheel_venv)
    empty, results = tmp_path / "empty", tmp_path / "results"
    empty.mkdir()
    proc = run_autograder(source, empty, results, python)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((results / "results.json").read_text())["score"] == 0
    submission = tmp_path / "submission"
    submission.mkdir()
    shutil.copy(SUBMISSIONS / "correct_lists.py", submission / "anything.py")
    run_autograder(source, submission, results, python)
    result = json.loads((results / "results.json").read_text())
    assert result["score"] == 40  # the default 30 with hidden multi_head_attention raised from 3 to 13


def test_forged_results_in_the_results_dir_are_overwritten(tmp_path, wheel_venv):
    source = build(tmp_path)
    python = install(source, wheel_venv)
    submission, results = tmp_path / "submission", tmp_path / "results"
    submission.mkdir()
    results.mkdir()
    # The submission knows Gradescope's path; here the path is redirected, so the test plants it itself.
    forged = f"import numpy as np\nopen({str(results / 'results.json')!r}, 'w').write('{{\"score\": 30}}')\n"
    (submission / "student.py").write_text(forged)
    run_autograder(source, submission, results, python)
    assert json.loads((results / "results.json").read_text())["score"] == 0


def test_each_bundle_carries_a_fresh_secret_seed_and_run_autograder_grades_with_it(tmp_path, wheel_venv):
    first, second = build(tmp_path / "a"), build(tmp_path / "b")
    seeds = [int((s / "seed.txt").read_text()) for s in (first, second)]
    assert seeds[0] != seeds[1] and DEFAULT_SEED not in seeds
    assert subprocess.run(["bash", "-n", str(first / "setup.sh")]).returncode == 0
    python = install(first, wheel_venv)
    submission, results = tmp_path / "submission", tmp_path / "results"
    submission.mkdir()
    shutil.copy(SUBMISSIONS / "mistake_missing_scale.py", submission / "student.py")
    assert run_autograder(first, submission, results, python).returncode == 0
    bundled = json.loads((results / "results.json").read_text())
    direct = run_grader(submission / "student.py", "--seed", seeds[0], "--json", tmp_path / "direct.json",
                        "--lang", "en")
    assert direct.returncode == 1
    assert bundled["tests"] == json.loads((tmp_path / "direct.json").read_text())["tests"]
    assert bundled["extra_data"]["public_seed"] is False and str(seeds[0]) not in json.dumps(bundled)


def test_the_instructor_can_fix_the_bundles_seed(tmp_path):
    seed_file = tmp_path / "seed.txt"
    seed_file.write_text("424242\n")
    assert (build(tmp_path / "x", "--seed-file", seed_file) / "seed.txt").read_text() == "424242\n"
