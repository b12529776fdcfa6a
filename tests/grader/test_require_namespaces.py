"""GRADER_REQUIRE_NAMESPACES=1 (.ci/run): where the sandbox's needs are missing, its tests fail instead of skipping.

A real pytest run of a real sandbox test, on a PATH without bubblewrap: the machine as a CI without it looks.
"""

import os
import subprocess
import sys
from pathlib import Path

from .conftest import REQUIRE_NAMESPACES

# A cheap test that needs namespaces through its module's mark, as every test of that module does.
NEEDS_NAMESPACES = "tests/grader/sandbox/test_isolation.py::test_the_hostile_files_of_this_round_are_in_the_corpus"


def run_without_bubblewrap(repo: Path, require: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_NAMESPACES}
    env["PATH"] = str(Path(sys.executable).parent)  # the venv's bin: python, but no bwrap
    if require is not None:
        env[REQUIRE_NAMESPACES] = require
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", NEEDS_NAMESPACES],
                          capture_output=True, text=True, cwd=repo, env=env, timeout=300)


def test_without_bubblewrap_a_sandbox_test_skips_saying_why(repo):
    proc = run_without_bubblewrap(repo, None)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "1 skipped" in proc.stdout and "no namespaces here" in proc.stdout, proc.stdout[-2000:]


def test_where_ci_requires_namespaces_the_same_test_fails_naming_what_is_missing(repo):
    proc = run_without_bubblewrap(repo, "1")
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "1 error" in proc.stdout or "1 failed" in proc.stdout, proc.stdout[-2000:]
    assert "no namespaces here" in proc.stdout and f"{REQUIRE_NAMESPACES}=1" in proc.stdout, proc.stdout[-2000:]
