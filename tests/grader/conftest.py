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

SUBMISSIONS = Path(__file__).with_name("submissions")
CALL_TIMEOUT = "1"  # seconds: keeps the hanging submissions cheap; correct ones need a few ms per call


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
