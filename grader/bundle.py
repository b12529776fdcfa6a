"""The Gradescope autograder: ``python -m grader bundle --out autograder.zip``.

Gradescope unzips the bundle into /autograder/source, runs ``setup.sh`` once when it builds the
image, and ``run_autograder`` for every submission. The bundle carries the project as a wheel built
from this checkout, which setup.sh installs: the grader runs from the installed package, with no
PYTHONPATH. ``run_autograder`` honours GRADER_SUBMISSION_DIR, GRADER_RESULTS_DIR, GRADER_PYTHON and
GRADER_LANG, so it can be tried locally on a temp dir.
"""

from __future__ import annotations

import io
import secrets
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from grader.grade import GradeConfig, grade
from grader.intake import HandIn, Refusal, open_path
from grader.messages import CATALOG, render, text
from grader.results import GradeResult
from mha.files import atomic_write_bytes, write_json

SETUP_SH = """#!/usr/bin/env bash
# Run once by Gradescope while it builds the autograder image: the pinned requirements, then this project.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
# The CPU build of torch: the default Linux wheel pulls several GB of CUDA libraries.
"$PYTHON" -m pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt
"$PYTHON" -m pip install --no-cache-dir --no-deps ./*.whl
# bubblewrap gives each submission its own namespaces; where the container forbids them (or apt is
# missing) the grader runs each submission as a uid of its own instead.
if ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap) \
        || echo "setup.sh: bubblewrap could not be installed; submissions will run as a uid of their own"
fi
# The grader, the reference and the secret seed are closed to other users: a submission run as
# another uid cannot read them.
for package in grader mha; do
    chmod -R o-rwx "$("$PYTHON" -c "import os, $package; print(os.path.dirname($package.__file__))")"
done
chmod -R o-rwx "$(pwd)"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Run by Gradescope for every submission: grade /autograder/submission/*.py into /autograder/results/results.json.
# Every path can be redirected (GRADER_SUBMISSION_DIR, GRADER_RESULTS_DIR) to try it on a temp dir.
set -uo pipefail
SOURCE="$(cd "$(dirname "$0")" && pwd)"
SUBMISSION="${GRADER_SUBMISSION_DIR:-/autograder/submission}"
RESULTS="${GRADER_RESULTS_DIR:-/autograder/results}"
PYTHON="${GRADER_PYTHON:-python3}"
mkdir -p "$RESULTS"
RUBRIC=()
if [ -f "$SOURCE/rubric.toml" ]; then RUBRIC=(--rubric "$SOURCE/rubric.toml"); fi
SEED=()
if [ -f "$SOURCE/seed.txt" ]; then SEED=(--seed-file "$SOURCE/seed.txt"); fi
# The grader and the reference as setup.sh installed them from the bundle's wheel.
exec "$PYTHON" -m grader gradescope "$SUBMISSION" "$RESULTS/results.json" --lang "${GRADER_LANG:-pt}" \
    "${RUBRIC[@]}" "${SEED[@]}"
"""

# What the wheel is built from: the project's metadata and its two package folders.
WHEEL_SOURCES = ("pyproject.toml", "README.md", "src", "grader")


def project_root() -> Path:
    root = Path(__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file() or not (root / "src" / "mha").is_dir():
        raise CATALOG.error("bundle.not_checkout", root=root)
    return root


def build_wheel(root: Path, out_dir: Path) -> Path:
    """Build the project's wheel into ``out_dir``, offline, from a copy of the sources (the checkout stays clean)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    with tempfile.TemporaryDirectory() as tmp:
        for name in WHEEL_SOURCES:
            source, target = root / name, Path(tmp) / name
            if source.is_dir():
                shutil.copytree(source, target, ignore=ignore)
            else:
                shutil.copy2(source, target)
        proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                               "--no-index", "--wheel-dir", str(out_dir), tmp], capture_output=True, text=True)
        if proc.returncode != 0:
            raise CATALOG.error("bundle.wheel_failed", code=proc.returncode, error=proc.stderr.strip()[-2000:])
    (wheel,) = out_dir.glob("mha_course-*.whl")
    return wheel


def build(out: Path, rubric: Path | None = None, seed: int | None = None) -> Path:
    """Write the autograder zip (atomically): scripts, pinned requirements, the project's wheel and the
    seed of the hidden cases (``seed``, or a fresh random one: the public default must not grade)."""
    seed = secrets.randbelow(2**31 - 1) if seed is None else seed
    root = project_root()
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16  # executable once unzipped
            zf.writestr(info, body)
        zf.write(root / "requirements.txt", "requirements.txt")
        wheel = build_wheel(root, Path(tmp))
        zf.write(wheel, wheel.name)
        if rubric is not None:
            zf.write(rubric, "rubric.toml")
        zf.writestr(zipfile.ZipInfo("seed.txt", date_time=(2024, 1, 1, 0, 0, 0)), f"{seed}\n")
    return atomic_write_bytes(out, buffer.getvalue())


def find_submission(directory: Path) -> HandIn | Refusal:
    """The hand-in in Gradescope's submission folder, by the batch's rules for one student's folder: the file
    that defines most functions anywhere inside (a .py, .ipynb or .zip), with its helper modules beside it."""
    return open_path(directory)


def run_gradescope(directory: Path, results_path: Path, config: GradeConfig) -> GradeResult | None:
    """Grade the submission in ``directory`` into Gradescope's results.json; always writes the file."""
    handin = find_submission(directory)
    if isinstance(handin, Refusal):
        output = text(config.lang, "gradescope.no_file", reason=render(config.lang, handin.message))
        write_json(results_path, {"score": 0, "output": output, "tests": []})
        return None
    # Written after the child is gone: a submission that writes results.json itself is overwritten.
    result = grade(handin, config, student=Path(handin.name).stem)
    write_json(results_path, result.to_gradescope())
    return result
