import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
# The browser of the pages' tests (tests/pipeline/test_report_browser.py, tests/grader/test_classpage.py).
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built offline from this checkout (as the Gradescope bundle builds it)."""
    from grader.bundle import build_wheel  # here, so that a broken grader fails only the tests that use it

    return build_wheel(REPO, tmp_path_factory.mktemp("dist"))


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
