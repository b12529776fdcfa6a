"""The bundle on Gradescope's default image, whose python3 is 3.10: its own setup.sh, run with a real Python 3.10,
finds a Python 3.11+ (here: a virtualenv of this checkout's pins named python3.11 on PATH, as apt's python3.11 would
be), installs there, and run_autograder grades a correct and a buggy submission with it, writing complete
results.json files. Without a Python 3.10 on the machine the test is skipped (pyenv's or PATH's python3.10)."""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from .conftest import SUBMISSIONS
from .test_bundle import ROOT_ONLY, Installed

PYTHON310 = bool(shutil.which("python3.10")) and subprocess.run(["python3.10", "--version"],
                                                                 capture_output=True).returncode == 0
PYENV310 = sorted(Path(os.path.expanduser("~/.pyenv/versions")).glob("3.10.*/bin/python3.10"))
INTERPRETER = shutil.which("python3.10") if PYTHON310 else (str(PYENV310[-1]) if PYENV310 else None)


class InstalledOn310(Installed):
    """Installed as on Gradescope's default image: PYTHON is 3.10, a newer Python is only on PATH."""

    def _setup_env(self) -> dict:
        found = self.base / "bin"
        found.mkdir(exist_ok=True)
        wrapper = found / "python3.11"  # a script, not a link: Python finds its virtualenv from where it runs
        wrapper.write_text(f'#!/bin/sh\nexec "{self.python}" "$@"\n')
        wrapper.chmod(0o755)
        env = super()._setup_env()
        env.update(PYTHON=INTERPRETER, PATH=f"{found}:{os.environ['PATH']}")
        return env


@ROOT_ONLY
@pytest.mark.skipif(INTERPRETER is None, reason="no Python 3.10 on this machine")
def test_setup_sh_run_with_python_3_10_installs_a_newer_python_and_grades_with_it(run_grader):
    assert subprocess.run([INTERPRETER, "-c", "import sys; assert sys.version_info[:2] == (3, 10)"]).returncode == 0
    base = Path(tempfile.mkdtemp(prefix="gradescope310-", dir="/tmp"))
    base.chmod(0o755)
    try:
        installed = InstalledOn310(base, run_grader)
        assert "older than the grader's Python 3.11" in installed.setup.stdout
        chosen = (installed.source / "python_path").read_text().strip()
        assert Path(chosen).resolve() == installed.python.resolve()
        installed.python_for_run = None  # run_autograder finds the interpreter setup.sh chose
        good = installed.run((SUBMISSIONS / "correct_numpy.py").read_text())
        bad = installed.run((SUBMISSIONS / "mistake_missing_scale.py").read_text())
        assert good is not None and bad is not None, installed.last.stderr[-2000:]
        assert good["score"] == good["extra_data"]["max_score"] and 0 < bad["score"] < good["score"]
        for results in (good, bad):
            assert {"output_format", "execution_time"} <= set(results)
            assert all({"number", "tags"} <= set(t) for t in results["tests"])
        assert any("missing-scale" in t["tags"] for t in bad["tests"])
        json.dumps(good)
    finally:
        shutil.rmtree(base, ignore_errors=True)
