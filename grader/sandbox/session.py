"""The sandbox: run one student's module in its own process tree and bring back only numbers.

How the process tree is started and isolated lives in ``grader/launch.py`` and
``grader/isolation.py``; this module speaks to it. ``Sandbox``:

- sends the submission's source and the numpy/torch locations in the first frame; the child writes
  the file into its own temp dir and imports it there;
- gives each call a wall-clock timeout, and the whole submission one more (``submission_seconds``);
  a timeout or crash ends the child's whole process tree and the next call starts a fresh child, so
  one hang costs only the calls that hung;
- writes requests without ever blocking past the call's deadline (a child that stops reading, or
  shrinks its pipe, only times out);
- drains stdout and stderr continuously, keeping only the first bytes, so a flood cannot block it,
  and strips control characters from anything it shows;
- reads answers only from its own pipe, with a random per-child token and a size cap, and parses
  nothing but JSON headers and raw float64 bytes.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import selectors
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from grader.child_runner import FRAME_HEAD
from grader.launch import Child, LaunchError, launcher

_MAX_HEADER = 64 * 1024
# numpy 2's NPY_MAXDIMS: no array the child's numpy makes has more dimensions, so a result of any rank
# comes back whole (a 9-dimensional answer is a wrong shape to name, not a forged frame)
_MAX_DIMS = 64
GIB = 1024**3
CRASH_GRACE = 1.0  # seconds a child that closed its pipe gets to exit, so that its signal can be named
# Everything a terminal could act on: C0 and C1 controls (ESC, BEL, CR, ...) but tab and newline; and the
# Unicode bidirectional marks, embeddings, overrides and isolates, with which text shows in another order
# than it is written in a terminal, a spreadsheet or Gradescope's page ("Trojan Source", CVE-2021-42574);
# and the invisible ones, with which text carries what no reader sees: zero-width spaces and joiners
# (U+200B-U+200D, U+2060, U+FEFF), the invisible operators (U+2061-U+2064), the Mongolian vowel separator,
# line and paragraph separators, and the tag characters (U+E0000-U+E007F, "ASCII smuggling").
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069"
                      r"\ufeff\U000e0000-\U000e007f]")
OUTPUT_MARK = "| "  # starts every line a submission printed, wherever the grader shows it


def printable(text: str) -> str:
    """Text a student's code produced, safe to show on an instructor's terminal or in a CSV."""
    return _CONTROL.sub("\ufffd", text)


def quoted_output(text: str) -> str:
    """What a submission printed, each line marked as its own: it cannot pass for a line of the grader's
    (a forged results table, a "30/30")."""
    return "\n".join(OUTPUT_MARK + line for line in printable(text).rstrip("\n").split("\n"))


@dataclass(frozen=True)
class Limits:
    """Every limit a submission runs under; the CLI's --timeout sets ``call_timeout``."""

    call_timeout: float = 3.0  # seconds of wall time per call
    import_timeout: float = 30.0  # seconds to start the child and import the submission
    # The budget of one submission: wall time for everything (the import and all calls, restarts
    # included); no process of it gets more CPU time than that either. docs/instructors.md: "Budgets".
    submission_seconds: float = 60.0
    memory_bytes: int = 2 * GIB  # address space per process; importing torch peaks near 0.65 GiB (measured)
    # Everything the tree holds (processes, shared memory, memfd, its /tmp), where a memory cgroup can be
    # had (grader/cgroup.py); the kernel's OOM killer then picks inside the submission only.
    tree_memory_bytes: int = 2 * GIB
    processes: int = 4  # processes and threads of the submission (so memory is at most 4 x memory_bytes)
    cpu_seconds: int = 60  # CPU time per process: the submission's wall budget, a backstop for busy threads
    file_bytes: int = 16 * 1024**2  # the largest file the child may write
    tmp_bytes: int = 64 * 1024**2  # the submission's private /tmp (namespaces mode)
    output_bytes: int = 64 * 1024  # stdout and stderr kept (each); the rest is read and dropped
    max_entries: int = 1_000_000  # the largest result accepted (8 MB of float64)
    max_restarts: int = 6  # fresh children after timeouts/crashes, per submission

    # The time limits and their one range, (0, MAX_SECONDS]: the command line's options, their help and their
    # error message read both from here.
    TIME_LIMITS: ClassVar[tuple[str, ...]] = ("call_timeout", "import_timeout", "submission_seconds")
    MAX_SECONDS: ClassVar[float] = 600.0

    @classmethod
    def seconds_allowed(cls, value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= cls.MAX_SECONDS

    def __post_init__(self):
        for name in self.TIME_LIMITS:
            value = getattr(self, name)
            if not self.seconds_allowed(value):
                raise ValueError(f"{name} must be a number of seconds in (0, {self.MAX_SECONDS:g}], got {value!r}")


@dataclass(frozen=True)
class Outcome:
    """What one load or call came to; ``value`` is a plain float64 array built by the parent."""

    status: str  # ok | error | timeout | crash | too_big | protocol | not_loaded
    value: np.ndarray | None = None
    dtype: str = ""
    error: str = ""
    error_type: str = ""
    line: int | None = None
    stage: str = ""  # "call" or "convert" for errors
    exit_code: int | None = None
    functions: tuple[str, ...] = ()
    skipped: tuple[dict, ...] = ()  # top-level statements the load skipped (grader.intake.child.skipped_fields)


@dataclass
class Captured:
    """The first bytes of what the child printed, and how much it printed in all."""

    limit: int
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, which: str, data: bytes) -> None:
        self.total += len(data)
        buf = self.stdout if which == "stdout" else self.stderr
        room = self.limit - len(buf)
        if room > 0:
            buf.extend(data[:room])

    def text(self) -> str:
        return printable((bytes(self.stdout) + bytes(self.stderr)).decode("utf-8", "replace"))


class ProtocolError(Exception):
    """The child's pipe carried something that is not one of our frames."""


def encode_args(args: list[Any], kwargs: dict[str, Any]) -> tuple[list, dict, bytes]:
    """Inputs as JSON descriptors plus one blob of float64 bytes."""
    blob = bytearray()

    def enc(value):
        if isinstance(value, (bool, np.bool_)):
            return {"kind": "scalar", "value": bool(value)}
        if isinstance(value, (int, np.integer)):
            return {"kind": "scalar", "value": int(value)}
        if isinstance(value, (list, tuple)):
            return {"kind": "list", "items": [enc(v) for v in value]}
        matrix = np.ascontiguousarray(value, dtype=np.float64)
        offset = len(blob)
        blob.extend(matrix.tobytes())
        return {"kind": "matrix", "shape": list(matrix.shape), "offset": offset}

    return [enc(a) for a in args], {k: enc(v) for k, v in kwargs.items()}, bytes(blob)


class Sandbox:
    """One submission's child; ``call`` restarts it after a timeout or crash.

    ``spawner`` is a launcher from ``grader.launch`` (shared by a batch); without one, the sandbox
    makes its own for ``isolation`` and closes it with itself.
    """

    def __init__(self, module_path, functions: list[str], limits: Limits = Limits(),
                 spawner=None, isolation: str = "namespaces", harness: dict | None = None,
                 imports: tuple[str, ...] | None = None):
        self.handin, self.imports = _handin(module_path), imports  # a path is read by the intake, as any hand-in
        self.source = self.handin.source().encode()
        self.harness = harness or {}  # grader/module/harness.py's sources, run beside the submission
        self.functions = list(functions)
        self.limits = limits
        self.captured = Captured(limits.output_bytes)
        self.restarts = 0
        self.timeouts = 0  # the import or a call ran out of time (a batch grades such a submission again, alone)
        self.load: Outcome | None = None
        self._own_spawner = spawner is None
        self._spawner = spawner if spawner is not None else launcher(isolation, [self.source], _packages(imports))
        self._child: Child | None = None
        self._next_id = 0
        self._deadline = time.monotonic() + limits.submission_seconds

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Outcome:
        """Start a fresh child and import the submission in it."""
        self._kill()
        lim = self.limits
        if time.monotonic() >= self._deadline:
            self.timeouts += 1
            self.load = Outcome("timeout")
            return self.load
        self._child = self._spawner.spawn(lim)
        self._token = secrets.token_bytes(16)
        self._buffer = bytearray()
        config = {"site_dirs": getattr(self._spawner, "site_dirs", []), "functions": self.functions,
                  "max_entries": lim.max_entries, **self.harness, **_load_config(self.handin, lim, self.imports)}
        try:
            deadline = self._bounded(time.monotonic() + lim.import_timeout)
            self._send(config, self.source, deadline)
            header, _ = self._receive(deadline)
        except TimeoutError:
            self._kill()
            self.timeouts += 1
            self.load = Outcome("timeout")
            return self.load
        except (EOFError, BrokenPipeError, ProtocolError) as exc:
            code = self._kill(CRASH_GRACE)
            self.load = Outcome("crash" if not isinstance(exc, ProtocolError) else "protocol", exit_code=code)
            return self.load
        if header.get("ready") is True:
            names = header.get("functions")
            functions = tuple(f for f in self.functions if isinstance(names, list) and f in names)
            self.load = Outcome("ok", functions=functions, skipped=_skipped(header))
        else:
            self._kill()
            self.load = Outcome("error", **_error_fields(header))
        return self.load

    def close(self) -> None:
        self._kill()
        if self._own_spawner:
            self._spawner.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _kill(self, grace: float = 0.0) -> int | None:
        child, self._child = self._child, None
        if child is None:
            return None
        return child.end(grace)

    def _bounded(self, deadline: float) -> float:
        return min(deadline, self._deadline)

    # ------------------------------------------------------------------ calls
    def call(self, function: str, args: list[Any], kwargs: dict[str, Any] | None = None) -> Outcome:
        if self._child is None:
            if self.load is not None and self.load.status != "ok":
                return Outcome("not_loaded")
            if self.restarts >= self.limits.max_restarts or time.monotonic() >= self._deadline:
                return Outcome("not_loaded")
            self.restarts += 1
            if self.start().status != "ok":
                return Outcome("not_loaded")
        self._next_id += 1
        call_id = self._next_id
        enc_args, enc_kwargs, blob = encode_args(args, kwargs or {})
        try:
            deadline = self._bounded(time.monotonic() + self.limits.call_timeout)
            self._send({"id": call_id, "function": function, "args": enc_args, "kwargs": enc_kwargs}, blob, deadline)
            header, payload = self._receive(deadline)
            while type(header.get("id")) is int and header["id"] < call_id:
                header, payload = self._receive(deadline)  # a late (or forged) second answer to an earlier call
        except TimeoutError:
            self._kill()
            self.timeouts += 1
            return Outcome("timeout")
        except (EOFError, BrokenPipeError) as exc:
            code = self._kill(CRASH_GRACE)
            if not getattr(self._spawner, "alive", lambda: True)():
                raise LaunchError("the sandbox server died while this submission ran") from exc
            return Outcome("crash", exit_code=code, error=str(exc))
        except ProtocolError as exc:
            self._kill()
            return Outcome("protocol", error=str(exc))
        if header.get("id") != call_id:
            self._kill()
            return Outcome("protocol", error="answer to another call")
        if header.get("ok") is True:
            return self._array(header, payload)
        if "too_big" in header:
            return Outcome("too_big", error=printable(str(header["too_big"])[:20]))
        return Outcome("error", **_error_fields(header))

    def _array(self, header: dict, payload: bytes) -> Outcome:
        shape = header.get("shape")
        # no bound on a single dimension: an empty answer may have any, e.g. (2_000_000, 0)
        if not (isinstance(shape, list) and len(shape) <= _MAX_DIMS and all(type(s) is int and s >= 0 for s in shape)):
            return Outcome("protocol", error="bad shape")
        size = math.prod(shape)  # Python ints: numpy's int64 product of [2**19] * 4 wraps around to 0
        if size > self.limits.max_entries or len(payload) != 8 * size:
            return Outcome("protocol", error="size does not match shape")
        value = np.frombuffer(payload, dtype=np.float64).reshape(shape).copy()
        return Outcome("ok", value=value, dtype=printable(str(header.get("dtype", ""))[:40]))

    # ------------------------------------------------------------------ frames
    def _send(self, header: dict, blob: bytes, deadline: float) -> None:
        """Write one frame, never past ``deadline``: the child may stop reading at any time."""
        data = json.dumps(header).encode()
        frame = memoryview(FRAME_HEAD.pack(self._token, len(data), len(blob)) + data + blob)
        child = self._child
        os.set_blocking(child.req_w, False)
        with self._selector(write=True) as sel:
            while frame:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                for key, _ in sel.select(timeout=left):
                    if key.data == "request":
                        try:
                            frame = frame[os.write(child.req_w, frame):]
                        except BlockingIOError:
                            pass
                        if not frame:
                            break
                    else:
                        self._read(sel, key)

    def _selector(self, write: bool = False) -> selectors.BaseSelector:
        child = self._child
        sel = selectors.DefaultSelector()
        sel.register(child.resp_r, selectors.EVENT_READ, "frame")
        sel.register(child.stdout, selectors.EVENT_READ, "stdout")
        sel.register(child.stderr, selectors.EVENT_READ, "stderr")
        if write:
            sel.register(child.req_w, selectors.EVENT_WRITE, "request")
        return sel

    def _read(self, sel: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
        data = os.read(key.fd, 1 << 16)
        if key.data == "frame":
            if not data:
                raise EOFError("the child closed its pipe")
            self._buffer.extend(data)
        elif data:
            self.captured.add(key.data, data)
        else:
            sel.unregister(key.fd)

    def _receive(self, deadline: float) -> tuple[dict, bytes]:
        """Read one frame from the child's pipe, draining its stdout/stderr meanwhile."""
        with self._selector() as sel:
            while True:
                frame = self._parse()
                if frame is not None:
                    return frame
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                for key, _ in sel.select(timeout=left):
                    self._read(sel, key)

    def _parse(self) -> tuple[dict, bytes] | None:
        buf = self._buffer
        if len(buf) < FRAME_HEAD.size:
            return None
        token, header_len, blob_len = FRAME_HEAD.unpack_from(buf)
        if not secrets.compare_digest(token, self._token):
            raise ProtocolError("a frame without this run's token")
        if header_len > _MAX_HEADER or blob_len > 8 * self.limits.max_entries:
            raise ProtocolError("a frame larger than allowed")
        end = FRAME_HEAD.size + header_len + blob_len
        if len(buf) < end:
            return None
        try:
            header = json.loads(bytes(buf[FRAME_HEAD.size:FRAME_HEAD.size + header_len]))
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes, e.g. [[[[…]]]]
            raise ProtocolError("a header that is not JSON") from None
        if not isinstance(header, dict):
            raise ProtocolError("a header that is not an object")
        payload = bytes(buf[FRAME_HEAD.size + header_len:end])
        del buf[:end]
        return header, payload


def _error_fields(header: dict) -> dict:
    """Only plain strings and ints from an error header, whatever else it holds."""
    line = header.get("line")
    return {
        "error": printable(str(header.get("error", ""))[:600]),
        "error_type": printable(str(header.get("error_type", ""))[:60]),
        "line": line if type(line) is int else None,
        "stage": printable(str(header.get("stage", ""))[:10]),
        "dtype": printable(str(header.get("dtype", ""))[:40]),
    }


# The intake's side of loading (imported here, not at the top: the intake uses ``printable`` from this module).
def _handin(module_path):
    from grader.intake import HandIn, open_path

    if isinstance(module_path, HandIn):
        return module_path
    handin = open_path(Path(module_path))
    if not isinstance(handin, HandIn):
        raise ValueError(f"{module_path} cannot be graded: {handin.message.key}")
    return handin


def _load_config(handin, limits: Limits, imports) -> dict:
    from grader.intake.child import DEFAULT_IMPORTS, child_config

    return child_config(handin, limits.import_timeout, imports or DEFAULT_IMPORTS)


def _skipped(header: dict) -> tuple[dict, ...]:
    from grader.intake.child import skipped_fields

    return skipped_fields(header)


def _packages(imports) -> tuple[str, ...]:
    from grader.intake.child import DEFAULT_IMPORTS

    return tuple(imports or DEFAULT_IMPORTS)
