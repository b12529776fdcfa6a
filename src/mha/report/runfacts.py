"""Facts about the run for the report's last section: versions, threads, CPU, git commit and date.

Nothing here reads the clock. The date shown is the git commit's own date, so that rendering the same
inputs at the same commit gives a byte-identical page; the training runs' saved configs are preferred
over this process's environment, since they describe the runs that produced the numbers.
"""

from __future__ import annotations

import platform
import subprocess
from dataclasses import dataclass
from importlib import metadata
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


def installed_version(package: str) -> str | None:
    if package == "python":
        return platform.python_version()
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def recorded(config: dict[str, Any], suffix: str) -> str | None:
    """The first flattened config value whose key ends with ``suffix`` (e.g. 'train.threads')."""
    for key, value in flatten(config).items():
        if key == suffix or key.endswith("." + suffix):
            return str(value)
    return None


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def git_commit(repo: Path) -> tuple[str | None, str | None]:
    """(hash, ISO-8601 committer date) of HEAD, or (None, None) outside a git checkout."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%H%n%cI"], cwd=repo, capture_output=True, text=True,
                             timeout=10, check=True).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None, None
    return (out[0], out[1]) if len(out) == 2 else (None, None)


def collect(config: dict[str, Any], repo: Path) -> RunFacts:
    versions = {name: recorded(config, f"versions.{package}") or installed_version(package)
                for package, name in PACKAGES.items()}
    commit, date = git_commit(repo)
    return RunFacts(versions=versions, threads=recorded(config, "threads"),
                    cpu=recorded(config, "cpu") or cpu_model(), commit=commit, commit_date=date)
