"""The intake in a helper process of its own, with its own memory and time limits: what the grader runs.

Reading a hand-in is parsing hostile data: a zip member that unpacks to its cap, a notebook of ten million
empty objects, a coding line whose codec is slow, an expression nested past Python's compiler, a file of
``!`` lines that IPython re-reads once each. All of it (``grader.intake.handin``: reading, unzipping,
decoding, nbformat, IPython's transformer, ``compile`` and ``ast``) runs in a child forked for that one
hand-in by a warm server, ``python -m grader.intake.bounded``, which imported them once (its own
single-threaded interpreter: forking it is safe whatever threads the grader runs). The child limits its own
address space (``Caps.memory_bytes``) and CPU time before it reads anything; the server waits for it at most
``seconds`` of wall time, kills it past them, and says why it gave no answer. The grader counts the time in
the submission's budget (``HandIn.seconds``), and idle servers wait for the next hand-in (one per grading
thread at most). Whatever becomes of the child (a refusal, a ``MemoryError``, a time-out, a kill, a bug), the
grader gets a ``HandIn`` or a ``Refusal`` with a reason; the grader's own process only ever holds the answer,
no larger than the code it will grade. Where there is no ``fork`` (Windows: a student grading their own file),
the server reads the hand-in itself, still outside the grader's process and within its time.

The boundary, both sides here: frames of an 8-byte big-endian length and a JSON body. A request is ``{"path",
"files", "label", "helpers", "caps", "seconds", "neighbours"}``; an answer is ``{"handin": {"name", "cells": [[source,
number]], "helpers": [[module, source]], "notes": [[key, values]]}}`` or ``{"refusal": {"name", "message":
[key, values]}}`` (``to_wire``/``from_wire``); message values are plain strings and numbers.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import ClassVar

from grader.intake.handin import HandIn, Refusal, open_files, open_path
from grader.intake.names import shown
from grader.intake.notebooks import Cell
from grader.intake.reading import DEFAULT_CAPS, MIB, Caps
from grader.messages import Message

ANSWER_SLACK = 6  # the answer's JSON may escape a byte of code into several (a control character into six)
ERROR_KEPT = 200  # characters of the helper's own error kept in a refusal
SERVER_START_SECONDS = 30  # a new server's own start (its imports), beyond the hand-in's seconds
# The helper computes nothing: numpy's thread pools (and their address space) are not started.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def read(path: Path | None = None, files: list[tuple[str, Path]] | None = None, label: str = "",
         helpers: tuple[Path, ...] = (), caps: Caps = DEFAULT_CAPS, seconds: float | None = None,
         neighbours: bool = False) -> HandIn | Refusal:
    """What the intake makes of ``path`` (``grader.intake.handin.open_path``, ``neighbours`` as there) or of one
    student's ``files`` (``open_files``), read in a bounded helper process; never raises for anything the
    hand-in holds."""
    seconds = caps.seconds if seconds is None else min(seconds, caps.seconds)
    shown_name = label or (shown(Path(path).name) if path is not None else "?")
    request = {"path": None if path is None else os.fspath(path),
               "files": [[inner, os.fspath(p)] for inner, p in files or ()], "label": label,
               "helpers": [os.fspath(h) for h in helpers], "caps": asdict(caps), "seconds": seconds,
               "neighbours": neighbours}
    start = time.monotonic()
    server = _Server.take()
    try:
        answer = server.ask(json.dumps(request).encode(), seconds + SERVER_START_SECONDS,
                            ANSWER_SLACK * caps.code_bytes + MIB)
    except _ServerLost as lost:
        server.close()
        why = Message("intake.timeout", {"seconds": round(seconds)}) if lost.timed_out else \
            Message("intake.failed", {"error": "the intake's helper process stopped"})
        return Refusal(shown_name, why, time.monotonic() - start)
    server.give_back()
    try:
        return replace(from_wire(json.loads(answer.decode("utf-8", "surrogatepass"))), seconds=time.monotonic() - start)
    except (ValueError, TypeError, KeyError) as exc:
        error = f"{type(exc).__name__}: {exc}"[:ERROR_KEPT]
        return Refusal(shown_name, Message("intake.failed", {"error": error}), time.monotonic() - start)


def prestart() -> None:
    """Start a server now for a hand-in read soon: its start (an interpreter importing the intake) runs
    beside the grader's own. Nothing when one is idle already."""
    with _Server._lock:
        if _Server._idle:
            return
    _Server().give_back()


class _ServerLost(Exception):
    """The server gave no answer in time (``timed_out``), or died."""

    def __init__(self, timed_out: bool):
        super().__init__("timed out" if timed_out else "stopped")
        self.timed_out = timed_out


class _Server:
    """One warm helper server, ``python -m grader.intake.bounded``: it imported the intake, nbformat and IPython's
    transformer once and forks a child per hand-in. Idle servers are kept for the next hand-in (one per grading
    thread at most); one that fails is closed."""

    _idle: ClassVar[list[_Server]] = []
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self):
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **ONE_THREAD,
               "PYTHONPATH": os.pathsep.join(filter(None, [_package_root(), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-m", "grader.intake.bounded"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)

    @classmethod
    def take(cls) -> _Server:
        with cls._lock:
            while cls._idle:
                server = cls._idle.pop()
                if server.proc.poll() is None:
                    return server
        return cls()

    def give_back(self) -> None:
        with self._lock:
            self._idle.append(self)

    def ask(self, request: bytes, seconds: float, most: int) -> bytes:
        """Send one request; its answer, within ``seconds``, at most ``most`` bytes; else ``_ServerLost``."""
        box: list[bytes] = []
        reader = threading.Thread(target=lambda: box.append(_read_frame(self.proc.stdout, most)), daemon=True)
        try:
            self.proc.stdin.write(_frame(request))
            self.proc.stdin.flush()
        except OSError:
            raise _ServerLost(timed_out=False) from None
        reader.start()
        reader.join(seconds)
        if reader.is_alive() or not box or box[0] is None:
            raise _ServerLost(timed_out=reader.is_alive())
        return box[0]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _package_root() -> str:
    """The folder holding the ``grader`` package, so that the server imports this very grader."""
    return str(Path(__file__).resolve().parent.parent.parent)


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def _read_frame(stream, most: int) -> bytes | None:
    """One length-prefixed frame from ``stream``; None at its end or past ``most`` bytes."""
    header = stream.read(8)
    if len(header) < 8:
        return None
    size = int.from_bytes(header, "big")
    if size > most:
        return None
    data = stream.read(size)
    return data if len(data) == size else None


def to_wire(result: HandIn | Refusal) -> dict:
    def message(m: Message) -> list:
        return [m.key, {k: v if isinstance(v, (str, int, float)) else str(v) for k, v in m.values.items()}]

    if isinstance(result, Refusal):
        return {"refusal": {"name": result.name, "message": message(result.message)}}
    return {"handin": {"name": result.name, "cells": [[c.source, c.number] for c in result.cells],
                       "helpers": [list(h) for h in result.helpers], "notes": [message(n) for n in result.notes],
                       "language": result.language}}


def from_wire(answer: dict) -> HandIn | Refusal:
    if "refusal" in answer:
        refusal = answer["refusal"]
        return Refusal(str(refusal["name"]), Message(*refusal["message"]))
    handin = answer["handin"]
    cells = tuple(Cell(str(source), number if type(number) is int else None) for source, number in handin["cells"])
    helpers = tuple((str(module), str(source)) for module, source in handin["helpers"])
    language = "r" if handin.get("language") == "r" else "python"
    return HandIn(str(handin["name"]), cells, helpers, tuple(Message(key, values) for key, values in handin["notes"]),
                  language=language)


def _limit_myself(caps: Caps, seconds: float) -> None:
    """The helper's own limits, set before it reads anything (where the resource module exists)."""
    try:
        import resource
    except ImportError:
        return
    resource.setrlimit(resource.RLIMIT_AS, (caps.memory_bytes, caps.memory_bytes))
    cpu = max(1, int(seconds) + 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))


def _answer(request: dict) -> bytes:
    """The answer to one request, worked out here: a refusal whatever goes wrong."""
    caps = Caps(**request["caps"])
    label = request["label"] or shown(Path(request["path"]).name)
    try:
        if request["path"] is not None:
            result = open_path(Path(request["path"]), caps, tuple(Path(h) for h in request["helpers"]),
                               bool(request.get("neighbours", False)))
        else:
            result = open_files([(inner, Path(p)) for inner, p in request["files"]], label, caps)
    except MemoryError:
        result = Refusal(label, Message("intake.memory", {"limit": round(caps.memory_bytes / MIB)}))
    except RecursionError:
        result = Refusal(label, Message("intake.too_complex", {"name": label}))
    except Exception as exc:  # noqa: BLE001 - a bug of the intake is this hand-in's refusal, never the grader's crash
        result = Refusal(label, Message("intake.failed", {"error": f"{type(exc).__name__}: {exc}"[:ERROR_KEPT]}))
    return json.dumps(to_wire(result), ensure_ascii=False).encode("utf-8", "surrogatepass")


def _forked(request: dict) -> bytes:
    """The answer worked out in a child forked for this request alone, which limits its own memory and CPU time
    first; the server waits for it at most ``seconds`` and says why when it gives no answer."""
    caps, seconds = Caps(**request["caps"]), float(request["seconds"])
    label = request["label"] or shown(Path(request["path"]).name)
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing it does reaches the server's own stdout
        code = 1
        try:
            os.close(readable)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            _limit_myself(caps, seconds)
            with os.fdopen(writable, "wb") as out:
                out.write(_answer(request))
            code = 0
        finally:
            os._exit(code)
    os.close(writable)
    deadline, chunks, size, timed_out = time.monotonic() + seconds, [], 0, False
    with os.fdopen(readable, "rb", buffering=0) as answer:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([answer], [], [], left)[0]:
                timed_out = True
                break
            chunk = answer.read(MIB)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > ANSWER_SLACK * caps.code_bytes + MIB:
                break
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out or os.WIFSIGNALED(status) and os.WTERMSIG(status) == getattr(signal, "SIGXCPU", 24):
        why = Message("intake.timeout", {"seconds": round(seconds)})
    elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return b"".join(chunks)
    elif os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
        why = Message("intake.failed", {"error": f"killed by signal {os.WTERMSIG(status)}"})
    else:  # killed by the kernel, or failed past its memory before it could answer
        why = Message("intake.memory", {"limit": round(caps.memory_bytes / MIB)})
    return json.dumps(to_wire(Refusal(label, why))).encode()


def main() -> int:
    """The server: reads length-prefixed requests on stdin until it closes, answers each on stdout (in a child
    of its own where the system can fork; in this process elsewhere, a student grading their own file)."""
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed by accident reaches the answers
    answered = 0
    while (request := _read_frame(requests, 64 * MIB)) is not None:
        if answered == 1:  # a second hand-in: a batch, worth warming up for (a lone file never waits for it)
            _warm_up()
        parsed = json.loads(request)
        answers.write(_frame(_forked(parsed) if hasattr(os, "fork") else _answer(parsed)))
        answers.flush()
        answered += 1
    return 0


def _warm_up() -> None:
    """What reading a notebook or a folder needs (nbformat's compiled schema, IPython's transformer), made once for
    every child to come."""
    from grader.intake import notebooks

    notebooks.code_cells(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    notebooks.transform(["!ls\n"])


if __name__ == "__main__":
    sys.exit(main())
