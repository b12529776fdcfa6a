"""The Gradescope bundle, installed exactly as Gradescope installs it, in a temp root instead of /autograder.

The bundle is unzipped into ROOT/autograder/source; its own setup.sh runs there as root (the pinned
requirements are this venv's, seen through one path line, so pip finds every one already satisfied and
never reaches an index); run_autograder is copied to ROOT/autograder/run_autograder and run from
ROOT/autograder, with submission/, submission_metadata.json and results/ beside it. Only
GRADER_AUTOGRADER_ROOT (the root) and GRADER_PYTHON (the venv's python) differ from Gradescope.
It is graded with namespaces, and in the uid mode: a machine where bubblewrap is missing.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

import pytest

import mha
from grader import bundle
from grader.sandbox import isolation

from .conftest import CORPORA, SUBMISSIONS, needs_system
from .sandbox.test_uid_mode import open_path_args

REPO = Path(__file__).resolve().parents[2]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="setup.sh runs as root, as on Gradescope")
# The first test that uses `installed` waits for the bundle's setup.sh (its own limit is 600 s): above the default.
pytestmark = pytest.mark.timeout(1200)
# Knows Gradescope's layout and tries what a submission there could: forge the results, read the secret.
HOSTILE = """
import glob, os
for path in glob.glob(ROOT + "/source/*") + [ROOT + "/source/secret.txt"]:
    try:
        print(path, open(path).read()[:80])
    except OSError as exc:
        print(path, exc)
for where in (ROOT + "/results/results.json", ROOT + "/results/forged.json"):
    try:
        open(where, "w").write('{"score": 30}')
    except OSError as exc:
        print(exc)
"""


def unzip(zip_path: Path, source: Path) -> None:
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(source)
        for info in zf.infolist():  # zipfile drops the executable bit; Gradescope's unzip keeps it
            if info.external_attr >> 16 & 0o111:
                os.chmod(source / info.filename, 0o755)


class Installed:
    """One bundle installed in a Gradescope-like root by its own setup.sh."""

    def __init__(self, base: Path, run_grader, *build_args):
        self.base = base
        self.root = base / "autograder"
        self.source = self.root / "source"
        zip_path = base / "autograder.zip"
        proc = run_grader("bundle", "--out", zip_path, *build_args)
        assert proc.returncode == 0, proc.stderr
        unzip(zip_path, self.source)
        venv = base / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        self.python = venv / "bin" / "python"
        purelib = subprocess.run([str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        Path(purelib, "pinned_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        # ensurepip's own setuptools is older than torch's requirement: this venv's (pinned) one serves
        subprocess.run([str(self.python), "-m", "pip", "uninstall", "--quiet", "--yes", "setuptools"], check=True,
                       capture_output=True, timeout=120)
        self.python_for_run = self.python
        self.setup = subprocess.run(["bash", str(self.source / "setup.sh")], cwd=self.source, env=self._setup_env(),
                                    capture_output=True, text=True, timeout=600)
        assert self.setup.returncode == 0, self.setup.stdout[-2000:] + self.setup.stderr[-2000:]
        shutil.copy(self.source / "run_autograder", self.root / "run_autograder")

    def _setup_env(self) -> dict:
        env = {**os.environ, "PYTHON": str(self.python), "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        env.pop("PYTHONPATH", None)
        return env

    def run(self, student_file: str, user_id: str = "1001", layout: tuple[str, ...] = (),
            name: str = "student.py") -> dict | None:
        """Hand in ``student_file``'s text as ``name`` and run run_autograder; results.json, or None."""
        submission, results = self.root / "submission", self.root / "results"
        shutil.rmtree(submission, ignore_errors=True)
        shutil.rmtree(results, ignore_errors=True)
        submission.mkdir()
        (submission / name).write_text(student_file)
        (self.root / "submission_metadata.json").write_text(json.dumps({"id": 7, "users": [{"id": user_id}]}))
        env = {**os.environ, "GRADER_AUTOGRADER_ROOT": str(self.root), "GRADER_LANG": "en"}
        if self.python_for_run is not None:
            env["GRADER_PYTHON"] = str(self.python_for_run)
        env.pop("PYTHONPATH", None)
        self.last = subprocess.run([*layout, str(self.root / "run_autograder")], capture_output=True, text=True,
                                   env=env, timeout=300, cwd=self.root)
        path = results / "results.json"
        return json.loads(path.read_text()) if path.exists() else None


@pytest.fixture(scope="module")
def installed(run_grader, tmp_path_factory):
    # Passable by other users all the way down, as /autograder is: the uid mode runs submissions as others.
    base = Path(tempfile.mkdtemp(prefix="gradescope-", dir="/tmp"))
    base.chmod(0o755)
    try:
        yield Installed(base, run_grader)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def correct() -> str:
    return (SUBMISSIONS / "correct_numpy.py").read_text()


def hostile(installed: Installed) -> str:
    return f"ROOT = {str(installed.root)!r}\n" + HOSTILE


def test_the_bundle_carries_what_grading_needs_and_nothing_more(installed):
    names = {p.name for p in installed.source.iterdir()}
    assert {"setup.sh", "run_autograder", "requirements-grading.txt", "secret.txt"} <= names
    assert f"mha_course-{mha.__version__}-py3-none-any.whl" in names  # the version is mha's, written once
    assert not {"grader", "src", "seed.txt", "requirements.txt"} & names  # the code comes only in the wheel
    required = (installed.source / "requirements-grading.txt").read_text()
    assert "numpy==" in required and "torch==2.13.0" in required
    assert not any(tool in required for tool in ("dvc", "pytest", "playwright", "ruff", "hypothesis"))
    assert len(bytes.fromhex((installed.source / "secret.txt").read_text().strip())) >= 16
    assert "PYTHONPATH" not in (installed.source / "run_autograder").read_text()


@ROOT_ONLY
@needs_system(isolation.namespaces_problem(), "no namespaces here")
@pytest.mark.skipif(shutil.which("R") is None, reason="R is not installed (setup.sh installs it on Gradescope)")
def test_installed_by_its_own_setup_sh_it_grades_an_r_hand_in(installed):
    assert "r-base-core r-cran-jsonlite r-cran-knitr" in (installed.source / "setup.sh").read_text()
    r_file = (CORPORA / "r_corpus" / "correct_sweep_outer.R").read_text()
    result = installed.run(r_file, name="atencao.R")
    assert result is not None, installed.last.stderr[-2000:]
    assert result["score"] == 30, json.dumps(result)[:2000]


@ROOT_ONLY
@needs_system(isolation.namespaces_problem(), "no namespaces here")
def test_installed_by_its_own_setup_sh_it_grades_with_namespaces(installed):
    result = installed.run(correct())
    assert result is not None, installed.last.stderr[-2000:]
    assert result["score"] == 30, json.dumps(result)[:2000]
    assert result["output_format"] == "text" and result["extra_data"]["public_seed"] is False
    attacked = installed.run(hostile(installed))
    assert attacked["score"] == 0
    secret = (installed.source / "secret.txt").read_text().strip()
    assert secret not in json.dumps(attacked) and not (installed.root / "results" / "forged.json").exists()


@ROOT_ONLY
def test_installed_by_its_own_setup_sh_it_grades_in_the_uid_mode_where_bubblewrap_is_missing(installed):
    python = Path(os.path.realpath(installed.python))
    venv = REPO / ".venv"
    layout = ("bwrap", "--dev-bind", "/", "/", "--die-with-parent", "--unshare-pid", "--proc", "/proc",
              *open_path_args(python, venv, needed=isolation.package_origins()),
              "--perms", "0711", "--tmpfs", str(REPO), "--ro-bind", str(venv), str(venv),
              "--ro-bind", "/dev/null", shutil.which("bwrap"))  # no bubblewrap: auto picks the uid mode
    result = installed.run(correct(), layout=layout)
    assert result is not None, installed.last.stderr[-2000:]
    assert "ran in the uid mode" in installed.last.stderr, installed.last.stderr[-500:]
    assert result["score"] == 30, json.dumps(result)[:2000]
    attacked = installed.run(hostile(installed), layout=layout)
    assert attacked["score"] == 0
    secret = (installed.source / "secret.txt").read_text().strip()
    assert secret not in json.dumps(attacked) and not (installed.root / "results" / "forged.json").exists()
    assert "Permission denied" in json.dumps(attacked)  # it tried, and the secret was closed to it


@ROOT_ONLY
def test_each_student_gets_cases_of_their_own_and_without_its_secret_the_bundle_grades_nobody(installed):
    mistake = (SUBMISSIONS / "mistake_missing_scale.py").read_text()
    first, again, other = (installed.run(mistake, user_id) for user_id in ("1001", "1001", "2002"))
    hidden = lambda r: [t["output"] for t in r["tests"] if "hidden" in t["name"] and t["score"] == 0]  # noqa: E731
    assert hidden(first) and hidden(first) == hidden(again) and hidden(first) != hidden(other)
    secret = installed.source / "secret.txt"
    kept = secret.read_bytes()
    secret.unlink()
    try:
        refused = installed.run(correct())  # nothing graded, and a results.json that says so
        assert refused["score"] == 0 and "tell your instructor" in refused["output"] and not refused["tests"]
        assert installed.last.returncode == 2 and "secret" in installed.last.stderr
    finally:
        secret.write_bytes(kept)


def test_a_bundle_takes_the_instructors_secret_and_its_script_files_and_refuses_a_short_secret(run_grader, tmp_path):
    mine = tmp_path / "secret.txt"
    mine.write_text("0f" * 32 + "\n")
    zip_path = tmp_path / "a.zip"
    assert run_grader("bundle", "--out", zip_path, "--secret-file", mine).returncode == 0
    with zipfile.ZipFile(zip_path) as zf:
        assert zf.read("secret.txt").decode().strip() == "0f" * 32
        for name in bundle.SCRIPT_NAMES:  # the template files, byte for byte, executable once unzipped
            assert zf.read(name) == (bundle.SCRIPTS / name).read_bytes()
            assert zf.getinfo(name).external_attr >> 16 == 0o100755
    mine.write_text("0f" * 8)
    short = run_grader("bundle", "--out", tmp_path / "b.zip", "--secret-file", mine)
    assert short.returncode == 2 and "at least 128" in short.stderr and not (tmp_path / "b.zip").exists()


def test_the_grading_requirements_are_requirements_txts_pins_of_the_packages_the_code_imports(repo):
    required = bundle.grading_requirements(repo).splitlines()
    pinned = (repo / "requirements.txt").read_text().splitlines()
    assert required and all(line in pinned for line in required)
    assert {line.split("==")[0] for line in required} == {"torch", "numpy", "pandas", "matplotlib", "jinja2",
                                                         "pyyaml", "tqdm", "nbformat", "ipython", "disarm"}



def test_the_bundles_scripts_pass_shellcheck():
    scripts = [str(bundle.SCRIPTS / name) for name in bundle.SCRIPT_NAMES]
    assert shutil.which("shellcheck"), "shellcheck is missing: `make test-setup` installs it"
    lint = subprocess.run(["shellcheck", *scripts], capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr
