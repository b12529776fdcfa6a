"""Facts about the run for the report's last section: versions, threads, CPU, git commit and date.

Nothing here reads the clock. The date shown is the git commit's own date, so that rendering the same
inputs at the same commit gives a byte-identical page. Versions, threads and CPU come from the training
run record (written by mha.train with mha.machine), never from this process: they describe the machine
that produced the numbers, not the one that renders the page. What a record lacks is shown as missing.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mha.report.tables import flatten

PACKAGES = {"python": "Python", "torch": "PyTorch", "dvc": "DVC", "numpy": "NumPy"}


@dataclass(frozen=True)
class RunFacts:
    versions: dict[str, str | None]  # display name -> version
    threads: str | None
    cpu: str | None
    commit: str | None
    commit_date: str | None


def recorded(config: dict[str, Any], suffix: str) -> str | None:
    """The first flattened config value whose key ends with ``suffix`` (e.g. 'train.threads')."""
    for key, value in flatten(config).items():
        if key == suffix or key.endswith("." + suffix):
            return None if value is None else str(value)
    return None


def git_commit(repo: Path) -> tuple[str | None, str | None]:
    """(hash, ISO-8601 committer date) of HEAD, or (None, None) outside a git checkout."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%H%n%cI"], cwd=repo, capture_output=True, text=True,
                             timeout=10, check=True).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None, None
    return (out[0], out[1]) if len(out) == 2 else (None, None)


def collect(config: dict[str, Any], repo: Path) -> RunFacts:
    """``config`` is a training run record (models/X.json); ``repo`` the checkout whose commit is shown."""
    versions = {name: recorded(config, f"versions.{package}") for package, name in PACKAGES.items()}
    commit, date = git_commit(repo)
    return RunFacts(versions=versions, threads=recorded(config, "threads"), cpu=recorded(config, "cpu"),
                    commit=commit, commit_date=date)
