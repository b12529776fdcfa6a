"""The Gradescope autograder: ``python -m grader bundle --out autograder.zip``.

Gradescope unzips the bundle into /autograder/source and runs ``setup.sh`` there, as root, once when it
builds the image; for every submission it copies ``run_autograder`` to /autograder/run_autograder and
runs it from /autograder, with the submission in /autograder/submission, its metadata in
/autograder/submission_metadata.json and the results due in /autograder/results/results.json.
``run_autograder`` finds everything from that root (GRADER_AUTOGRADER_ROOT, default /autograder, so a
test can lay it out in a temp dir), never from where the script itself lies.

The bundle carries the project as a wheel built from this checkout, the pinned requirements grading
needs (those of the packages the installed code imports: not dvc, pytest, playwright, ruff) and the
instructor's secret, ``secret.txt``. A bundle that cannot find its secret refuses to grade.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

from grader import secret as secret_mod
from grader.grade import GradeConfig, grade
from grader.intake import HandIn, Refusal, bounded
from grader.messages import Message, text
from grader.results import GradeResult
from mha.files import atomic_write_bytes, write_json

SETUP_SH = """#!/usr/bin/env bash
# Run once by Gradescope, as root, in /autograder/source while it builds the autograder image: the pinned
# requirements grading needs, then this project.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
# The grader needs Python 3.11 or later; Gradescope's default image (Ubuntu 22.04) has 3.10. Then: a newer Python
# already on the image (a virtualenv's is used as it is), else apt's python3.11, else uv's standalone build; a
# virtualenv is made from it beside the source folder (readable by the uid a submission runs as), and its path
# is left in python_path for run_autograder.
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup.sh: $("$PYTHON" --version 2>&1) is older than the grader's Python 3.11; finding a newer one"
    FOUND=""
    for candidate in python3.13 python3.12 python3.11; do
        if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
            FOUND="$(command -v "$candidate")"
            break
        fi
    done
    if [ -z "$FOUND" ] && command -v apt-get >/dev/null 2>&1; then
        (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3.11 python3.11-venv) \
            && FOUND="$(command -v python3.11)" || true
    fi
    if [ -z "$FOUND" ]; then
        export UV_PYTHON_INSTALL_DIR=/opt/grader-python  # not under /root: other uids must run it
        ("$PYTHON" -m pip install --no-cache-dir uv && "$PYTHON" -m uv python install 3.12) \
            && FOUND="$("$PYTHON" -m uv python find 3.12)" || true
    fi
    if [ -z "$FOUND" ]; then
        echo "setup.sh: no Python 3.11 or later could be found or installed" >&2
        exit 1
    fi
    if "$FOUND" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
        PYTHON="$FOUND"  # a virtualenv already
    else
        VENV="$(cd .. && pwd)/python"
        "$FOUND" -m venv "$VENV"
        PYTHON="$VENV/bin/python"
    fi
fi
"$PYTHON" -c 'import sys; print(sys.executable)' > python_path
# The CPU build of torch: the default Linux wheel pulls several GB of CUDA libraries.
"$PYTHON" -m pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu \
    -r requirements-grading.txt
"$PYTHON" -m pip install --no-cache-dir --no-deps ./*.whl
# bubblewrap gives each submission its own namespaces; where the container forbids them (or apt is
# missing) the grader runs each submission as a uid of its own instead.
if ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap) \
        || echo "setup.sh: bubblewrap could not be installed; submissions will run as a uid of their own"
fi
# R grades hand-ins written in R (grader/sandbox/r_runner.R); without it they get a row saying what to install.
if ! command -v R >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        r-base-core r-cran-jsonlite r-cran-knitr) || echo "setup.sh: R could not be installed; R hand-ins will say so"
fi
# The grader, the reference and the secret are closed to other users: a submission run as another uid
# cannot read them. The runner's folder (grader/sandbox/inside) is the one part of the grader a submission's
# process must read.
for package in grader mha; do
    chmod -R o-rwx "$("$PYTHON" -c "import os, $package; print(os.path.dirname($package.__file__))")"
done
chmod -R o+rX "$("$PYTHON" -c "import os, grader.sandbox.inside as inside; print(os.path.dirname(inside.__file__))")"
chmod -R o-rwx "$(pwd)"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Run by Gradescope for every submission, copied to /autograder/run_autograder and run from there: grade
# /autograder/submission into /autograder/results/results.json. GRADER_AUTOGRADER_ROOT moves the whole
# layout (a test's temp dir); the secret is always the one setup.sh left in the root's source folder.
set -uo pipefail
ROOT="${GRADER_AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
PYTHON="${GRADER_PYTHON:-$(cat "$SOURCE/python_path" 2>/dev/null || echo python3)}"  # setup.sh's choice
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
RUBRIC=()
if [ -f "$SOURCE/rubric.toml" ]; then RUBRIC=(--rubric "$SOURCE/rubric.toml"); fi
# No secret, no grades: the grader refuses a --secret-file it cannot read, never grading with the public seed.
"$PYTHON" -m grader gradescope "$ROOT/submission" "$RESULTS" --lang "${GRADER_LANG:-pt}" \
    --secret-file "$SOURCE/secret.txt" --metadata "$ROOT/submission_metadata.json" "${RUBRIC[@]}"
CODE=$?
# Always a results file: where the grader itself could not run or write one, a 0 that says so in both languages.
if [ ! -s "$RESULTS" ]; then
    WHY="O corretor falhou antes de corrigir esta entrega; avise o professor."
    WHY="$WHY / The grader failed before grading this hand-in; tell your instructor."
    printf '{"score": 0, "output": "%s (exit %s)", "tests": []}\n' "$WHY" "$CODE" > "$RESULTS"
fi
exit "$CODE"
"""

# What the wheel is built from: the project's metadata and its two package folders.
WHEEL_SOURCES = ("pyproject.toml", "README.md", "src", "grader")


def project_root() -> Path:
    root = Path(__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file() or not (root / "src" / "mha").is_dir():
        raise Message.error("bundle.not_checkout", root=root)
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
            raise Message.error("bundle.wheel_failed", code=proc.returncode, error=proc.stderr.strip()[-2000:])
    (wheel,) = out_dir.glob("mha_course-*.whl")
    return wheel


def grading_requirements(root: Path) -> str:
    """requirements.txt's pinned lines for the packages the installed code imports (pyproject's
    dependencies): what grading needs, without the tools of the pipeline and the tests."""
    names = {_name(dep) for dep in tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]}
    lines = [line for line in (root / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#") and _name(line) in names]
    return "\n".join(lines) + "\n"


def _name(requirement: str) -> str:
    name = requirement.strip()
    for stop in "<>=!~[; ":
        name = name.split(stop, 1)[0]
    return name.lower().replace("_", "-")


def build(out: Path, rubric: Path | None = None, secret: str | None = None) -> Path:
    """Write the autograder zip (atomically): scripts, the requirements grading needs, the project's wheel
    and the instructor's secret (``secret``'s hex text, or a fresh random one)."""
    secret = secret_mod.new() if secret is None else secret
    root = project_root()
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16  # executable once unzipped
            zf.writestr(info, body)
        zf.writestr(zipfile.ZipInfo("requirements-grading.txt", date_time=(2024, 1, 1, 0, 0, 0)),
                    grading_requirements(root))
        wheel = build_wheel(root, Path(tmp))
        zf.write(wheel, wheel.name)
        if rubric is not None:
            zf.write(rubric, "rubric.toml")
        zf.writestr(zipfile.ZipInfo("secret.txt", date_time=(2024, 1, 1, 0, 0, 0)), secret)
    return atomic_write_bytes(out, buffer.getvalue())


def find_submission(directory: Path, seconds: float | None = None) -> HandIn | Refusal:
    """The hand-in in Gradescope's submission folder, by the batch's rules for one student's folder: the file
    that defines most functions anywhere inside (a .py, .ipynb or .zip), with its helper modules beside it;
    read in the intake's bounded helper process, within ``seconds`` of the submission's budget."""
    return bounded.read(directory, seconds=seconds)


def run_gradescope(directory: Path, results_path: Path, config: GradeConfig,
                   identity: str | None = None) -> GradeResult | None:
    """Grade the submission in ``directory`` into Gradescope's results.json; always writes the file.
    ``identity`` (who submitted) picks the student's hidden cases; None: the file's name."""
    try:
        handin = find_submission(directory, config.limits.submission_seconds)
    except Exception as exc:  # noqa: BLE001 - a results.json with the reason, whatever happened
        handin = Refusal(directory.name, Message("intake.failed", {"error": f"{type(exc).__name__}: {exc}"[:300]}))
    student = Path(handin.name).stem if identity is None else identity
    if isinstance(handin, Refusal):  # every test failed with the reason: a results.json as complete as any other
        refusal = handin.message
        if refusal.values.get("name") == directory.name:  # Gradescope's folder, not a name the student gave
            refusal = Message(refusal.key, {**refusal.values, "name": Message("gradescope.folder")})
        result = grade(Refusal(handin.name, refusal), config, student=student)
        payload = result.to_gradescope()
        payload["output"] = text(config.lang, "gradescope.no_file", reason=refusal.text(config.lang))
        write_json(results_path, payload)
        return None
    # Written after the child is gone: a submission that writes results.json itself is overwritten.
    result = grade(handin, config, student=student)
    write_json(results_path, result.to_gradescope())
    return result
