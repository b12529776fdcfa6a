"""The Gradescope autograder: ``python -m grader bundle --out autograder.zip``.

Gradescope unzips the bundle into /autograder/source, runs ``setup.sh`` once when it builds the
image, and ``run_autograder`` for every submission. ``run_autograder`` honours GRADER_SUBMISSION_DIR,
GRADER_RESULTS_DIR, GRADER_PYTHON and GRADER_LANG, so it can be tried locally on a temp dir.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from mha.files import atomic_write_bytes, write_json

from grader.grade import GradeConfig, grade
from grader.messages import text
from grader.results import GradeResult

SETUP_SH = """#!/usr/bin/env bash
# Run once by Gradescope while it builds the autograder image: the pinned requirements, then this project.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
# The CPU build of torch: the default Linux wheel pulls several GB of CUDA libraries.
"$PYTHON" -m pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt
"$PYTHON" -m pip install --no-cache-dir --no-deps .
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
cd "$SOURCE"
# The bundle's own copy of the grader and the reference, whatever else is installed.
PYTHONPATH="$SOURCE:$SOURCE/src" exec "$PYTHON" -m grader gradescope "$SUBMISSION" "$RESULTS/results.json" \\
    --lang "${GRADER_LANG:-pt}" "${RUBRIC[@]}"
"""


def project_root() -> Path:
    root = Path(__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file() or not (root / "src" / "mha").is_dir():
        raise ValueError(f"bundle must be built from a source checkout of this project; {root} has no pyproject.toml and src/mha")
    return root


def _files(root: Path) -> list[tuple[Path, str]]:
    picked = [(root / name, name) for name in ("pyproject.toml", "requirements.txt", "README.md")]
    for package in (root / "grader", root / "src" / "mha"):
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".toml", ".json"):
                picked.append((path, path.relative_to(root).as_posix()))
    return picked


def build(out: Path, rubric: Path | None = None) -> Path:
    """Write the autograder zip (atomically): scripts at its root, the project beside them."""
    root = project_root()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16  # executable once unzipped
            zf.writestr(info, body)
        for path, arcname in _files(root):
            zf.write(path, arcname)
        if rubric is not None:
            zf.write(rubric, "rubric.toml")
    return atomic_write_bytes(out, buffer.getvalue())


def pick_submission(directory: Path) -> Path | None:
    """student.py if present, else the only .py file; None when there is no single candidate."""
    if (directory / "student.py").is_file():
        return directory / "student.py"
    candidates = sorted(directory.glob("*.py"))
    return candidates[0] if len(candidates) == 1 else None


def run_gradescope(directory: Path, results_path: Path, config: GradeConfig) -> GradeResult | None:
    """Grade the submission in ``directory`` into Gradescope's results.json; always writes the file."""
    path = pick_submission(directory)
    if path is None:
        found = ", ".join(p.name for p in sorted(directory.glob("*.py"))) or "-"
        write_json(results_path, {"score": 0, "output": text(config.lang, "gradescope.no_file", found=found), "tests": []})
        return None
    # Written after the child is gone: a submission that writes results.json itself is overwritten.
    result = grade(path, config, student=path.stem)
    write_json(results_path, result.to_gradescope())
    return result
