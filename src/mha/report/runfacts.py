"""Facts about the run for the report's last section: versions, threads, git commit and date.

Nothing here reads the clock. The commit shown is the last one that changed the pipeline's inputs (INPUTS), with
its own date, so that rendering the same inputs gives a byte-identical page, also after the results are committed:
a clone of the commit that holds them reproduces the page it holds. Versions and threads come from the training run
record (written by mha.train with mha.machine), never from this process: they describe the run that produced
the numbers, not the one that renders the page. Nothing here describes the machine (the CPU is in the run log,
mha.artifacts.runlog): the page is the same wherever the same run is reproduced. What a record lacks is shown
as missing.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from mha.artifacts.run import RunRecord

PACKAGES = {"python": "Python", "torch": "PyTorch", "dvc": "DVC", "numpy": "NumPy"}


@dataclass(frozen=True)
class RunFacts:
    versions: dict[str, str | None]  # display name -> version
    threads: str | None
    commit: str | None
    commit_date: str | None
    modified: tuple[str, ...] = ()  # inputs that differ from the commit: the page is not that commit's alone


# What decides the pages' numbers; dvc.lock, metrics and plots change during a reproduction itself.
INPUTS = ("params.yaml", "dvc.yaml", "src", "pipeline")


def git_commit(repo: Path) -> tuple[str | None, str | None]:
    """(hash, ISO-8601 committer date) of the last commit that changed INPUTS, or (None, None) outside a git
    checkout."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%H%n%cI", "--", *INPUTS], cwd=repo, capture_output=True,
                             text=True, timeout=10, check=True).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None, None
    return (out[0], out[1]) if len(out) == 2 else (None, None)


def uncommitted(repo: Path) -> tuple[str, ...]:
    """The tracked inputs (INPUTS) with changes not in HEAD, as git names them; () outside a git checkout."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", *INPUTS], cwd=repo,
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(sorted(line[3:] for line in out.splitlines() if len(line) > 3))


def collect(record: RunRecord, repo: Path) -> RunFacts:
    """``record`` is a training run's record (models/X.json); ``repo`` the checkout whose commit is shown."""
    versions = {name: record.versions.get(package) for package, name in PACKAGES.items()}
    threads = record.train.get("threads")
    commit, date = git_commit(repo)
    return RunFacts(versions=versions, threads=None if threads is None else str(threads), commit=commit,
                    commit_date=date, modified=uncommitted(repo) if commit else ())
