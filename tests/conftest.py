import contextlib
import os
import shlex
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
BIN = Path(sys.executable).parent  # the venv's bin: dvc, and the python the stages run with
# The browser of the pages' tests (tests/pipeline/test_report_browser.py, tests/grader/classpage/test_render.py).
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


# The lanes (docs/architecture.md: Tests). `make test-fast` runs every test none of these marks; `make test`
# runs that lane first, then the marked ones (--fast-first, below). A test gets its mark from what it uses, so a
# new test lands in its lane without anyone remembering: a fixture below, its folder, or a module of one kind; an
# explicit `@pytest.mark.<lane>` adds one where none says it (a test that starts the sandbox its own way). A test of
# the fast lane that starts the grader or its sandbox all the same fails, naming what it started (no_sandbox below).
LANES = ("sandbox", "pipeline", "corpus", "browser")
LANE_FIXTURES = {"browser": "browser", "graded_corpus": "corpus", "graded_r_class": "corpus", "run_stage": "pipeline",
                 "dvc": "pipeline",
                 "wheel": "sandbox", "wheel_venv": "sandbox",  # the wheel: built and graded with as Gradescope does
                 # tests/grader/conftest.py: the grader's command line in a fresh process (its peak memory measured),
                 # a file graded in the real sandbox, a launcher a module's tests share, a hand-in read for a Sandbox
                 "run_grader": "sandbox", "measured_grader": "sandbox", "grade": "sandbox", "spawner": "sandbox",
                 "handin": "sandbox"}
LANE_FOLDERS = {"pipeline": "pipeline", "benchmarks": "pipeline"}  # tests/<folder>: real dvc repro, stages, training
# Modules whose every test is in a lane: training runs and fresh training processes, the corpora, and the sandbox's
# session, whose every test opens a Sandbox on a probe it writes (a module of one kind: a test added there is one).
LANE_MODULES = {"mha/test_train.py": "pipeline", "mha/test_denormals.py": "pipeline",
                "grader/test_corpus.py": "corpus", "grader/test_same_grade.py": "corpus",
                "grader/test_outside.py": "corpus", "grader/test_mistake_variants.py": "corpus",
                "grader/sandbox/test_session.py": "sandbox"}


def lanes(item: pytest.Item) -> set[str]:
    """The lanes ``item`` belongs to, from its fixtures, its folder and its module."""
    found = {lane for fixture, lane in LANE_FIXTURES.items() if fixture in item.fixturenames}
    if not item.path.is_relative_to(TESTS):  # a file named on the command line from elsewhere: its fixtures say
        return found
    module = item.path.relative_to(TESTS)
    if module.parts[0] in LANE_FOLDERS:
        found.add(LANE_FOLDERS[module.parts[0]])
    if module.as_posix() in LANE_MODULES:
        found.add(LANE_MODULES[module.as_posix()])
    return found


def in_slow_lane(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(lane) is not None for lane in LANES)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fast-first", action="store_true",
                     help="run the fast lane first and the slow lanes after it, in one session; where a test of the "
                          "fast lane failed, stop before the slow lanes (`make test`)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for lane in sorted(lanes(item) - {mark.name for mark in item.iter_markers()}):
            item.add_marker(lane)
    if config.getoption("fast_first"):
        items.sort(key=in_slow_lane)  # stable: each lane keeps the collection's order


# What only a slow lane may start: bubblewrap (the sandbox, or a probe of it), setpriv (the uid mode), the sandbox's
# runner (either launcher's child, in Python or in R) and the grader's command line in a fresh process. A test of
# the fast lane that starts one fails at once, naming what it started: it belongs in the sandbox lane, through a
# fixture that says so (LANE_FIXTURES). So every run of the fast lane checks the lanes, not a list kept by hand.
SANDBOX_PROGRAMS = {"bwrap", "setpriv"}
SANDBOX_RUNNERS = ("/sandbox/inside", ".grader_inside", "grader/sandbox/inside", "r_runner.R")
GRADER_CODE = ("grader.cli", "grader.bundle")  # `python -c` code that runs the grader's command line
SHELLS = {"sh", "bash", "dash"}


def sandbox_start(argv) -> str | None:
    """What ``argv`` (as Popen takes it) starts that only a slow lane may, or None. A `sh -c` line is read as the
    command it runs."""
    args = [os.fsdecode(argv)] if isinstance(argv, str | bytes | os.PathLike) else [os.fsdecode(a) for a in argv]
    if len(args) == 1 and " " in args[0]:  # a shell line (shell=True)
        args = ["sh", "-c", args[0]]
    for arg in args:
        if Path(arg).name in SANDBOX_PROGRAMS:
            return Path(arg).name
        if arg.rstrip("/").endswith(SANDBOX_RUNNERS):
            return "the sandbox's runner"
    for flag, value in zip(args, args[1:], strict=False):
        if (flag, value) == ("-m", "grader") or (flag == "-c" and any(code in value for code in GRADER_CODE)):
            return "the grader's command line"
        if flag == "-c" and Path(args[0]).name in SHELLS:
            return sandbox_start(shlex.split(value, posix=True))
    return None


class FastLaneStartedSandbox(RuntimeError):
    pass


@contextlib.contextmanager
def no_sandbox(test: str):
    """Within: a Popen of what ``sandbox_start`` names raises instead of starting it."""
    popen = subprocess.Popen.__init__

    def refusing(self, args, *rest, **options):
        started = sandbox_start(args)
        if started is not None:
            raise FastLaneStartedSandbox(
                f"{test} is in the fast lane but started {started} ({args!r}): take it through a fixture of the "
                f"sandbox lane (tests/conftest.py: LANE_FIXTURES), e.g. run_grader or grade")
        popen(self, args, *rest, **options)

    subprocess.Popen.__init__ = refusing
    try:
        yield
    finally:
        subprocess.Popen.__init__ = popen


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    with contextlib.nullcontext() if in_slow_lane(item) else no_sandbox(item.nodeid):  # its fixtures' set-up too
        reports = yield
    last_fast = nextitem is not None and not in_slow_lane(item) and in_slow_lane(nextitem)
    if item.config.getoption("fast_first") and last_fast and item.session.testsfailed:
        item.session.shouldstop = "a test of the fast lane failed: the slow lanes did not run"
    return reports


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built offline from this checkout (as the Gradescope bundle builds it)."""
    from grader.bundle import build_wheel  # here, so that a broken grader fails only the tests that use it

    return build_wheel(REPO, tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def run_stage() -> Callable[..., subprocess.CompletedProcess]:
    """A factory: ``run_stage(name, *args, env=None, cwd=REPO, timeout=120)`` runs ``pipeline/<name>.py`` with
    ``args`` in a fresh interpreter, as dvc.yaml's cmd does; returns the finished process, unchecked (a test of a
    refusal wants its exit code and stderr)."""

    def run(name: str, *args, env: dict[str, str] | None = None, cwd: Path = REPO,
            timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(REPO / "pipeline" / f"{name}.py"), *map(str, args)],
                              capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)

    return run


@pytest.fixture(scope="session")
def dvc() -> Callable[..., subprocess.CompletedProcess]:
    """A factory: ``dvc(project, *args, env=None, timeout=900)`` runs this venv's dvc in ``project`` and asserts
    that it succeeded, with its output in the message where it did not."""

    def run(project: Path, *args: str, env: dict[str, str] | None = None,
            timeout: float = 900) -> subprocess.CompletedProcess:
        proc = subprocess.run([str(BIN / "dvc"), *args], cwd=project, env=env, capture_output=True, text=True,
                              timeout=timeout)
        assert proc.returncode == 0, f"dvc {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc

    return run


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


@pytest.fixture
def clean_env() -> dict[str, str]:
    """This environment without PYTHONPATH, so nothing but a venv's own paths is importable."""
    return _clean_env()


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory) -> Callable[[Path], Path]:
    """A factory: a fresh venv with only ``wheel`` installed; returns its python.

    The pinned dependencies (numpy, torch, ...) are not reinstalled: one path line points at this
    venv's site-packages. Python processes .pth files only in its site directories, not in a folder
    named by a path line, so the editable install there (its finder and .pth) stays invisible.
    """

    def make(wheel: Path) -> Path:
        root = tmp_path_factory.mktemp("venv")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
        python = root / "bin" / "python"
        purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True, env=_clean_env()).stdout.strip()
        Path(purelib, "pinned_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                        "--no-index", str(wheel)], check=True, capture_output=True, timeout=300)
        return python

    return make


@pytest.fixture(scope="module")
def browser():
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()
