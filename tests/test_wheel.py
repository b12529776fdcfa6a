"""The wheel is the whole project: every module and data file, usable with no source tree in sight."""

import shutil
import subprocess
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORRECT = REPO / "tests" / "grader" / "corpora" / "submissions" / "correct_numpy.py"


def source_files() -> set[str]:
    """The wheel paths of every module and data file in the checkout's two packages."""
    found = set()
    for package, base in ((REPO / "src" / "mha", REPO / "src"), (REPO / "grader", REPO)):
        for path in package.rglob("*"):
            if path.suffix in (".py", ".json", ".toml") and "__pycache__" not in path.parts:
                found.add(path.relative_to(base).as_posix())
    return found


def test_the_wheel_holds_every_module_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"mha/report/render.py", "mha/data/worked_example.json", "grader/rubric.toml"} <= names
    assert source_files() - names == set()


def test_the_installed_wheel_grades_and_renders_without_the_source_tree(wheel, wheel_venv, clean_env, tmp_path):
    python = wheel_venv(wheel)
    venv = python.parent.parent

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(python), *args], cwd=tmp_path, env=clean_env, capture_output=True, text=True,
                              timeout=180)

    where = run("-c", "import mha, grader, mha.report.render, mha.report.runfacts, grader.cli; "
                      "print(mha.__file__); print(grader.__file__); print(mha.report.render.__file__)")
    assert where.returncode == 0, where.stderr
    assert all(Path(line).is_relative_to(venv) for line in where.stdout.split()), where.stdout

    template = run("-m", "grader", "--template")
    assert template.returncode == 0, template.stderr
    assert "def softmax" in template.stdout and "NotImplementedError" in template.stdout

    shutil.copy(CORRECT, tmp_path / "student.py")
    graded = run("-m", "grader", "student.py", "--lang", "en")
    assert graded.returncode == 0, graded.stdout + graded.stderr  # 0: full marks
