import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from grader.cases import DEFAULT_SEED

# The corpora: hand-ins written as students write them, shared by the tests of several packages (the CLI, the
# intake, the sandbox, the class page) and graded as one family by scripts/verdict_snapshot.py.
CORPORA = Path(__file__).with_name("corpora")
SUBMISSIONS = CORPORA / "submissions"
CALL_TIMEOUT = "1"  # seconds: keeps the hanging submissions cheap; correct ones need a few ms per call
# CI asks for the sandbox (.ci/run): where what it needs from the machine is missing (namespaces, bubblewrap,
# root, a memory cgroup), the tests that need it fail, naming what is missing, instead of skipping.
REQUIRE_NAMESPACES = "GRADER_REQUIRE_NAMESPACES"


def needs_system(missing: object, reason: str) -> pytest.MarkDecorator:
    """A mark for a test that needs the machine to provide something: ``missing`` is truthy (a problem, or
    True) where it does not. The test is then skipped for ``reason``, or failed where GRADER_REQUIRE_NAMESPACES=1."""
    if not missing:
        return pytest.mark.needs_system(missing=None)
    detail = reason if missing is True else f"{reason}: {missing}"
    return pytest.mark.needs_system(missing=detail)


def skip_or_fail(reason: str) -> None:
    """Inside a test or fixture: skip for ``reason``, or fail where GRADER_REQUIRE_NAMESPACES=1."""
    if os.environ.get(REQUIRE_NAMESPACES) == "1":
        pytest.fail(f"{reason} ({REQUIRE_NAMESPACES}=1: the sandbox's tests must run here, not skip)", pytrace=False)
    pytest.skip(reason)


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs_system"):
        if mark.kwargs["missing"]:
            skip_or_fail(mark.kwargs["missing"])


def run_grader(*args, env=None, cwd=None, timeout=120):
    """The real command line, in a fresh interpreter, as a user runs it."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=timeout)


@dataclass
class GradedCorpus:
    gradebook: pd.DataFrame
    results: dict  # student -> results.json payload
    seconds: float
    stdout: str


@pytest.fixture(scope="session")
def graded_corpus(tmp_path_factory) -> GradedCorpus:
    """Every submission of the corpus graded once, by the batch command with two jobs."""
    out = tmp_path_factory.mktemp("corpus")
    start = time.perf_counter()
    proc = run_grader(SUBMISSIONS, "--csv", out / "grades.csv", "--jobs", 2, "--timeout", CALL_TIMEOUT, "--lang", "en",
                      "--seed", DEFAULT_SEED, timeout=300)
    seconds = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr
    results = {p.stem: json.loads(p.read_text()) for p in (out / "grades_results").glob("*.json")}
    return GradedCorpus(pd.read_csv(out / "grades.csv", keep_default_na=False), results, seconds, proc.stdout)
