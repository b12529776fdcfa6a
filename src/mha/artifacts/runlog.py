"""A training run's log: what differs on every machine and every run (wall time, speed, CPU, host, dates).

Every file a stage declares in dvc.yaml is hashed into dvc.lock, which is in git, so each must come out
byte-identical for the same results: then a reproduction on another machine leaves `git status` clean. What the
machine decides lives here instead, in a file git ignores (`runs/`) and dvc.yaml does not declare. The training
stages write it atomically at every checkpoint and at the end, and print its figures as they end; `make repro`
(mha.repro) reads its wall time for its estimates; a resumed run takes its training time so far from it.

    runs/models/X.json   the RunLog of the run whose record is models/X.json (`run_log_path`)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mha.artifacts.records import ArtifactError, JsonArtifact

RUNS = Path("runs")  # under the checkout's root, in .gitignore


@dataclass(frozen=True)
class RunLog:
    fingerprint: str  # mha.checkpoint.fingerprint of the run's record: a log another run left is not this run's
    step: int  # optimizer steps done when it was written
    wall_seconds: float  # training time up to `step`, over every process that trained this run
    tokens_per_second: float  # training tokens over that time
    finished: bool  # the run ended and wrote its outputs
    cpu: str | None  # mha.machine.cpu_model() of the process that wrote it
    host: str
    started: str  # ISO 8601, UTC: when the first process of this run began training
    written: str  # ISO 8601, UTC
    compile_seconds: float | None = None  # train.compile: this process's first step, compilation included


RUN_LOG = JsonArtifact(RunLog, "run log")  # written by train_attention, train_no_attention and lab_train


def run_log_path(record: str | Path, root: str | Path = ".") -> Path:
    """The log of the run whose record is ``record``: models/X.json -> runs/models/X.json under ``root``, the
    checkout's root, where DVC runs the stages with dvc.yaml's relative paths. A record outside ``root`` (a
    script run by hand elsewhere) has its log beside it, as X.log.json."""
    base = os.path.abspath(root)
    path = os.path.abspath(os.path.join(base, record))
    relative = os.path.relpath(path, base)
    if relative.split(os.sep, 1)[0] == os.pardir:
        return Path(path).with_suffix(".log.json")
    return Path(root) / RUNS / relative


def read_run_log(path: str | Path) -> RunLog | None:
    """The log at ``path``, or None where there is none to use (missing, malformed: it is only ever a guide)."""
    try:
        return RUN_LOG.read(path)
    except ArtifactError:
        return None


def logged_at() -> str:
    """Now, as a run log's dates are written."""
    return datetime.now(UTC).isoformat(timespec="seconds")
