"""The intake in a helper process of its own, with its own memory and time limits: what the grader runs.

Reading a hand-in is parsing hostile data: a zip member that unpacks to its cap, a notebook of ten million
empty objects, a coding line whose codec is slow, an expression nested past Python's compiler, a file of
``!`` lines that IPython re-reads once each. All of it (``grader.intake.handin``: reading, unzipping,
decoding, nbformat, IPython's transformer, ``compile`` and ``ast``) runs in ``python -m
grader.intake.bounded``, which limits its own address space (``Caps.memory_bytes``) and CPU time before it
reads its request; the grader waits at most ``seconds`` of wall time for it, and that time is counted in the
submission's budget (``HandIn.seconds``). Whatever becomes of the helper (a refusal, a ``MemoryError``, a
time-out, a kill, a bug), the grader gets a ``HandIn`` or a ``Refusal`` with a reason; the grader's own
process only ever holds the answer, which is no larger than the code it will grade.

The boundary, both sides here: the request is one JSON object on the helper's stdin, ``{"path", "files",
"label", "helpers", "caps"}``; the answer is one JSON object on its stdout, ``{"handin": {"name", "cells":
[[source, number]], "helpers": [[module, source]], "notes": [[key, values]]}}`` or ``{"refusal": {"name",
"message": [key, values]}}``; message values are plain strings and numbers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

from grader.intake.handin import HandIn, Refusal, open_files, open_path
from grader.intake.names import shown
from grader.intake.notebooks import Cell
from grader.intake.reading import DEFAULT_CAPS, Caps
from grader.messages import Message

ANSWER_SLACK = 6  # the answer's JSON may escape a byte of code into several (a control character into six)
ERROR_KEPT = 200  # characters of the helper's own error kept in a refusal
# The helper computes nothing: numpy's thread pools (and their address space) are not started.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def read(path: Path | None = None, files: list[tuple[str, Path]] | None = None, label: str = "",
         helpers: tuple[Path, ...] = (), caps: Caps = DEFAULT_CAPS, seconds: float | None = None) -> HandIn | Refusal:
    """What the intake makes of ``path`` (``grader.intake.handin.open_path``) or of one student's ``files``
    (``open_files``), read in the bounded helper process; never raises for anything the hand-in holds."""
    seconds = caps.seconds if seconds is None else min(seconds, caps.seconds)
    shown_name = label or (Path(path).name if path is not None else "?")
    request = {"path": None if path is None else os.fspath(path),
               "files": [[inner, os.fspath(p)] for inner, p in files or ()],
               "label": label, "helpers": [os.fspath(h) for h in helpers], "caps": asdict(caps)}
    start = time.monotonic()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_package_root(), os.environ.get("PYTHONPATH")])),
           "PYTHONDONTWRITEBYTECODE": "1", **ONE_THREAD}
    try:
        proc = subprocess.run([sys.executable, "-m", "grader.intake.bounded"], input=json.dumps(request).encode(),
                              capture_output=True, timeout=seconds, env=env, check=False)
    except subprocess.TimeoutExpired:
        return Refusal(shown_name, Message("intake.timeout", {"seconds": round(seconds)}), time.monotonic() - start)
    spent = time.monotonic() - start
    if len(proc.stdout) > ANSWER_SLACK * caps.code_bytes + 1024**2:
        return Refusal(shown_name, Message("intake.failed", {"error": "answer too large"}), spent)
    try:
        return replace(from_wire(json.loads(proc.stdout.decode("utf-8", "surrogatepass"))), seconds=spent)
    except (ValueError, TypeError, KeyError):
        return Refusal(shown_name, _died(proc, caps, seconds), spent)


def _died(proc: subprocess.CompletedProcess, caps: Caps, seconds: float) -> Message:
    """Why the helper gave no answer: past its CPU time, past its memory, or its own error."""
    if proc.returncode == -getattr(signal, "SIGXCPU", 24):
        return Message("intake.timeout", {"seconds": round(seconds)})
    if b"MemoryError" in proc.stderr[-2000:] or proc.returncode == -signal.SIGKILL:  # SIGKILL: the kernel's OOM killer
        return Message("intake.memory", {"limit": round(caps.memory_bytes / 1024**2)})
    if proc.returncode < 0:
        return Message("intake.failed", {"error": f"killed by signal {-proc.returncode}"})
    last = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
    return Message("intake.failed", {"error": last[0][:ERROR_KEPT]})


def _package_root() -> str:
    """The folder holding the ``grader`` package, so that the helper imports this very grader."""
    return str(Path(__file__).resolve().parent.parent.parent)


def to_wire(result: HandIn | Refusal) -> dict:
    def message(m: Message) -> list:
        return [m.key, {k: v if isinstance(v, (str, int, float)) else str(v) for k, v in m.values.items()}]

    if isinstance(result, Refusal):
        return {"refusal": {"name": result.name, "message": message(result.message)}}
    return {"handin": {"name": result.name, "cells": [[c.source, c.number] for c in result.cells],
                       "helpers": [list(h) for h in result.helpers], "notes": [message(n) for n in result.notes]}}


def from_wire(answer: dict) -> HandIn | Refusal:
    if "refusal" in answer:
        refusal = answer["refusal"]
        return Refusal(str(refusal["name"]), Message(*refusal["message"]))
    handin = answer["handin"]
    cells = tuple(Cell(str(source), number if type(number) is int else None) for source, number in handin["cells"])
    helpers = tuple((str(module), str(source)) for module, source in handin["helpers"])
    return HandIn(str(handin["name"]), cells, helpers, tuple(Message(key, values) for key, values in handin["notes"]))


def _limit_myself(caps: Caps, seconds: float) -> None:
    """The helper's own limits, set before it reads anything (where the resource module exists)."""
    try:
        import resource
    except ImportError:
        return
    resource.setrlimit(resource.RLIMIT_AS, (caps.memory_bytes, caps.memory_bytes))
    cpu = max(1, int(seconds) + 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))


def main() -> int:
    request = json.loads(sys.stdin.buffer.read())
    caps = Caps(**request["caps"])
    _limit_myself(caps, caps.seconds)
    label = request["label"] or shown(Path(request["path"]).name)
    try:
        if request["path"] is not None:
            result = open_path(Path(request["path"]), caps, tuple(Path(h) for h in request["helpers"]))
        else:
            result = open_files([(inner, Path(p)) for inner, p in request["files"]], label, caps)
    except MemoryError:
        result = Refusal(label, Message("intake.memory", {"limit": round(caps.memory_bytes / 1024**2)}))
    except RecursionError:
        result = Refusal(label, Message("intake.too_complex", {"name": label}))
    except Exception as exc:  # noqa: BLE001 - a bug of the intake is this hand-in's refusal, never the grader's crash
        result = Refusal(label, Message("intake.failed", {"error": f"{type(exc).__name__}: {exc}"[:ERROR_KEPT]}))
    sys.stdout.buffer.write(json.dumps(to_wire(result), ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
