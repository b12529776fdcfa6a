import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from grader import rubric
from grader.functions.contract import DEFAULT_SEED
from grader.grade import grade as grade_in_sandbox
from grader.intake import HandIn, open_path
from grader.results import GradeResult
from grader.sandbox import launch
from grader.sandbox.launch import Launcher

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


def read_handin(path: Path) -> HandIn:
    """The hand-in at ``path`` as the intake reads it (``grader.intake.open_path``): what a ``Sandbox`` takes."""
    handin = open_path(Path(path))
    assert isinstance(handin, HandIn), f"{path} is refused: {handin.message.key}"
    return handin


@pytest.fixture
def handin():
    """``handin(path)``: the hand-in at ``path``, read by the intake, for a test that drives a ``Sandbox``."""
    return read_handin


def grader_argv(*args) -> list[str]:
    """The grader's command line with ``args``, in a fresh interpreter, as a user runs it."""
    return [sys.executable, "-m", "grader", *map(str, args)]


def grader_command(*args, env=None, cwd=None, timeout=120) -> subprocess.CompletedProcess:
    """The real command line, in a fresh interpreter, as a user runs it."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(grader_argv(*args), capture_output=True, text=True, env=full_env, cwd=cwd, timeout=timeout)


class StartedGrading:
    """The grader's command line started in the background, its output going to files in ``folder`` (a pipe that
    nobody reads until the end would fill and stop it); ``result`` waits for it."""

    def __init__(self, folder: Path, *args):
        self.folder = folder
        with (folder / "stdout").open("w") as out, (folder / "stderr").open("w") as err:
            self.proc = subprocess.Popen(grader_argv(*args), stdout=out, stderr=err, text=True)

    def result(self, timeout: float) -> subprocess.CompletedProcess:
        try:
            self.proc.wait(timeout=timeout)
        finally:
            self.stop()
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, (self.folder / "stdout").read_text(),
                                           (self.folder / "stderr").read_text())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# The grader's own command line, in a fresh interpreter, reporting its own peak memory (not its children's).
# The grader's own peak: VmHWM, the high-water mark of this process's memory since its exec. ru_maxrss would not do:
# Linux carries it over from the parent that forked it, so under a long pytest run it reports pytest's own size.
MEASURED = ("import re, sys\nfrom grader.cli import main\ncode = main(sys.argv[1:])\n"
            "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
            "print('peak_kib', hwm, file=sys.stderr)\nsys.exit(code)\n")


def measured_command(*args, timeout=600) -> tuple[subprocess.CompletedProcess, float]:
    proc = subprocess.run([sys.executable, "-c", MEASURED, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)
    peak = [int(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("peak_kib ")]
    assert peak, proc.stderr[-3000:]
    return proc, peak[-1] / 1024


# The fixtures that start the grader or its sandbox: a test that takes one is in the sandbox lane
# (tests/conftest.py: LANE_FIXTURES), one that takes none in the fast lane, which refuses to start either.
@pytest.fixture(scope="session")
def run_grader() -> Callable[..., subprocess.CompletedProcess]:
    """``run_grader(*args, env=None, cwd=None, timeout=120)``: the grader's command line in a fresh interpreter, as
    a user runs it; returns the finished process, unchecked."""
    return grader_command


@pytest.fixture(scope="session")
def measured_grader() -> Callable[..., tuple[subprocess.CompletedProcess, float]]:
    """``measured_grader(*args, timeout=600)``: the grader's command line in a fresh interpreter, with the peak memory
    of the grader's own process in MiB."""
    return measured_command


@pytest.fixture(scope="session")
def spawner() -> Iterator[Launcher]:
    """One warm server with torch for the whole run: question 2's hand-ins (the module corpus, its attacks) are
    graded through it as a batch grades them, instead of a server started again by each module."""
    with_torch = launch.launcher("namespaces", ("torch",), rubric.load().imports)
    yield with_torch
    with_torch.close()


@pytest.fixture(scope="session")
def grade() -> Callable[..., GradeResult]:
    """``grade(path, config, ...)``: one file graded in this process, its code run in the real sandbox."""
    return grade_in_sandbox


@dataclass
class GradedCorpus:
    gradebook: pd.DataFrame
    results: dict  # student -> results.json payload
    stdout: str


@pytest.fixture(scope="session")
def graded_corpus(run_grader, tmp_path_factory) -> GradedCorpus:
    """Every submission of the corpus graded once, by the batch command with two jobs."""
    out = tmp_path_factory.mktemp("corpus")
    proc = run_grader(SUBMISSIONS, "--csv", out / "grades.csv", "--jobs", 2, "--timeout", CALL_TIMEOUT, "--lang", "en",
                      "--seed", DEFAULT_SEED, timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = {p.stem: json.loads(p.read_text()) for p in (out / "grades_results").glob("*.json")}
    return GradedCorpus(pd.read_csv(out / "grades.csv", keep_default_na=False), results, proc.stdout)


def start_r_class(folder: Path) -> StartedGrading:
    """The R class of corpora/r_class.py built in ``folder`` and its grading started: the batch command, two jobs."""
    from .corpora import r_class  # here: it reads this module's corpora

    (folder / "class").mkdir()
    r_class.build(folder / "class")
    return StartedGrading(folder, folder / "class", "--csv", folder / "grades.csv", "--jobs", 2, "--timeout", 2,
                          "--lang", "en", "--seed", DEFAULT_SEED)


# The R class is the slowest corpus to grade (about a minute on two cores). The fast lane runs one test at a time and
# leaves a core idle, so a session whose tests read the R class starts its grading as soon as collection ends, and
# graded_r_class waits for it. Measured: the fast lane alone 47 s, the R class alone 53 to 69 s; side by side (the
# class with one job) the fast lane took 63 s and the class 76 s.
R_CLASS_STARTED = pytest.StashKey[StartedGrading]()


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if any("graded_r_class" in getattr(item, "fixturenames", ()) for item in session.items):
        session.config.stash[R_CLASS_STARTED] = start_r_class(Path(tempfile.mkdtemp(prefix="r-class-")))


def pytest_sessionfinish(session: pytest.Session) -> None:
    started = session.config.stash.get(R_CLASS_STARTED, None)
    if started is not None:  # stopped if no test read it (a failure in the fast lane stops the session first)
        started.stop()
        shutil.rmtree(started.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def graded_r_class(request, tmp_path_factory) -> GradedCorpus:
    """The R class of corpora/r_class.py graded once, by the batch command with two jobs, started when the session
    started where it could be; its gradebook by student."""
    started = request.config.stash.get(R_CLASS_STARTED, None) or start_r_class(tmp_path_factory.mktemp("r_class"))
    proc = started.result(timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    book = pd.read_csv(started.folder / "grades.csv", keep_default_na=False).set_index("student")
    results = {p.stem: json.loads(p.read_text()) for p in (started.folder / "grades_results").glob("*.json")}
    return GradedCorpus(book, results, proc.stdout)
