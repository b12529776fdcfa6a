"""`make repro`: `dvc repro` with one progress line per stage, "stage 3 of 14", and an estimate of what is left.

Before it starts, DVC's own status says which stages are out of date; those and every stage downstream of them
are the plan (an upper bound: DVC skips a downstream stage whose inputs came out unchanged). Each stage's time is
estimated from, first, how long it took the last time this checkout ran it (kept in .dvc/tmp, which git and DVC
ignore), else the wall time in the run log of a training stage's finished run (runs/, mha.artifacts.runlog; a
stage run by `dvc repro` itself writes one too), else not at all (said so).
DVC's output passes through; only its closing "Use `dvc push`" hint is replaced when no remote is configured.

    python -m mha.repro [dvc repro arguments...]
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from mha.artifacts.runlog import read_run_log, run_log_path
from mha.files import write_json

RUNNING = re.compile(r"^Running stage '([^']+)'")
PUSH_HINT = "Use `dvc push` to send your updates to remote storage."
NO_REMOTE = ("No DVC remote is configured, so the outputs stay in this checkout's .dvc/cache; `make pages` copies "
             "the two pages to docs/pages for git (README: Results without training).")
TIMES = Path(".dvc") / "tmp" / "stage_seconds.json"  # this checkout's own measurements


def plan(root: Path) -> list[str]:
    """The stages `dvc repro` would run, dependencies first: the out-of-date ones and everything downstream."""
    import networkx as nx
    from dvc.repo import Repo

    with Repo(str(root)) as repo, repo.lock:
        graph = repo.index.graph  # an edge goes from a stage to a stage it depends on
        changed = {stage for stage in repo.index.stages if stage.changed()}
        affected = set(changed)
        for stage in changed:
            affected |= nx.ancestors(graph, stage)
        order = reversed(list(nx.topological_sort(graph)))
        return [stage.addressing for stage in order if stage in affected]


def logged_seconds(root: Path) -> dict[str, float]:
    """Each training stage's wall time, from the run log of a finished run whose record dvc.lock names among the
    stage's outputs (where there is one)."""
    lock = root / "dvc.lock"
    if not lock.exists():
        return {}
    seconds = {}
    for name, stage in (yaml.safe_load(lock.read_text()) or {}).get("stages", {}).items():
        for out in stage.get("outs", []):
            if not out["path"].endswith(".json"):
                continue
            log = read_run_log(run_log_path(out["path"], root))
            if log is not None and log.finished:
                seconds[name] = log.wall_seconds
    return seconds


def load_times(root: Path) -> dict[str, float]:
    try:
        times = json.loads((root / TIMES).read_text())
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in times.items() if isinstance(v, (int, float))} if isinstance(times, dict) else {}


def estimates(stages: Iterable[str], measured: Mapping[str, float], logged: Mapping[str, float]) -> dict[str, float]:
    """Seconds per stage where something is known: this checkout's last run of it, else its run log, else, for a
    stage of a matrix (lab_train@heads_1-1337), the mean of its siblings' times known so far."""
    stages = list(stages)
    known = {s: measured.get(s, logged.get(s)) for s in stages if s in measured or s in logged}
    siblings: dict[str, list[float]] = {}
    for name, seconds in {**logged, **measured}.items():
        siblings.setdefault(name.split("@")[0], []).append(seconds)
    for stage in stages:
        family = siblings.get(stage.split("@")[0])
        if stage not in known and "@" in stage and family:
            known[stage] = sum(family) / len(family)
    return known


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{math.ceil(seconds / 60)} min"


def progress_line(number: int, total: int, stage: str, pending: Iterable[str], known: Mapping[str, float]) -> str:
    """The line printed when ``stage``, the ``number``-th of ``total``, starts; ``pending`` includes it."""
    pending = list(pending)
    this = f"about {duration(known[stage])}" if stage in known else "no earlier time"
    left = sum(known[s] for s in pending if s in known)
    unknown = sum(s not in known for s in pending)
    total_left = f"about {duration(left)} left" if left else "time left unknown"
    if unknown and left:
        total_left += f", plus {unknown} stage{'s' * (unknown > 1)} never timed here"
    return f"repro: stage {number} of {total}: {stage} ({this}; {total_left})"


def run(root: Path, args: list[str]) -> int:
    stages = plan(root)
    if not stages:
        print("repro: every stage is up to date", flush=True)
    measured = load_times(root)
    logged = logged_seconds(root)
    known = estimates(stages, measured, logged)
    if stages:
        print(f"repro: {len(stages)} stage{'s' * (len(stages) > 1)} to run: {', '.join(stages)}", flush=True)
    remotes = subprocess.run(["dvc", "remote", "list"], cwd=root, capture_output=True, text=True).stdout
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the stages' own lines in order with DVC's
    proc = subprocess.Popen(["dvc", "repro", *args], cwd=root, stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
    current, started, done = None, 0.0, []
    assert proc.stdout is not None
    for line in proc.stdout:
        match = RUNNING.match(line)
        if match:
            if current:
                measured[current] = time.monotonic() - started
                known = estimates(stages, measured, logged)
            current, started = match[1], time.monotonic()
            if current not in stages:  # DVC ran a stage the status did not predict: count it in
                stages.append(current)
            done.append(current)
            pending = [s for s in stages if s not in done] + [current]
            print(progress_line(len(done), len(stages), current, pending, known), flush=True)
        if line.strip() == PUSH_HINT and not remotes.strip():
            line = NO_REMOTE + "\n"
        sys.stdout.write(line)
        sys.stdout.flush()
    code = proc.wait()
    if current and code == 0:
        measured[current] = time.monotonic() - started
    if measured:
        write_json(root / TIMES, {k: round(v, 1) for k, v in sorted(measured.items())})
    return code


def main(argv: list[str] | None = None) -> int:
    return run(Path.cwd(), list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
