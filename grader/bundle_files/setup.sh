#!/usr/bin/env bash
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
        # shellcheck disable=SC2015  # either step failing leaves FOUND empty; || true only keeps set -e quiet
        (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3.11 python3.11-venv) \
            && FOUND="$(command -v python3.11)" || true
    fi
    if [ -z "$FOUND" ]; then
        export UV_PYTHON_INSTALL_DIR=/opt/grader-python  # not under /root: other uids must run it
        # shellcheck disable=SC2015  # as above
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
