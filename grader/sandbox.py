"""The parent side of the sandbox: one fresh interpreter per submission, serving calls over a private pipe.

What it does for every submission:
- copies the file into a new temp dir and starts ``python -I -S -B child_runner.py`` there, with a
  scrubbed environment: no PYTHONPATH, no user site, no ``.pth`` processing (so the editable install
  of this project is invisible), only the real site-packages directories of numpy (and torch) on
  sys.path, and a meta-path finder that refuses ``grader`` and ``mha``;
- sets resource limits on the child (address space, CPU time, file size, no core dumps) before the
  child reads its first frame, i.e. before any student code runs;
- gives each call a wall-clock timeout; a timeout or crash kills the child's whole process group and
  the next call starts a fresh child, so one hang costs only the calls that hung;
- drains stdout and stderr continuously, keeping only the first bytes, so a flood cannot block it;
- reads answers only from its own pipe, with a random per-child token and a size cap, and parses
  nothing but JSON headers and raw float64 bytes.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

RUNNER = Path(__file__).with_name("child_runner.py")
_HEAD = struct.Struct("<16sIQ")
_MAX_HEADER = 64 * 1024
GIB = 1024**3


@dataclass(frozen=True)
class Limits:
    """Every limit the child runs under; the CLI's --timeout sets ``call_timeout``."""

    call_timeout: float = 3.0  # seconds of wall time per call
    import_timeout: float = 30.0  # seconds to start the interpreter and import the submission
    memory_bytes: int = 2 * GIB  # address space; importing torch peaks near 0.65 GiB (measured), numpy far less
    cpu_seconds: int = 120  # CPU time over the child's whole life (a backstop for busy threads)
    file_bytes: int = 16 * 1024**2  # the largest file the child may write
    output_bytes: int = 64 * 1024  # stdout and stderr kept (each); the rest is read and dropped
    max_entries: int = 1_000_000  # the largest result accepted (8 MB of float64)
    max_restarts: int = 6  # fresh children after timeouts/crashes, per submission

    def __post_init__(self):
        for name in ("call_timeout", "import_timeout"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0 < value <= 600):
                raise ValueError(f"{name} must be a number of seconds in (0, 600], got {value!r}")


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
        return (bytes(self.stdout) + bytes(self.stderr)).decode("utf-8", "replace")


class ProtocolError(Exception):
    """The child's pipe carried something that is not one of our frames."""


def site_dirs() -> list[str]:
    """The site-packages directories holding numpy and torch, found without importing torch."""
    import importlib.util

    dirs = []
    for name in ("numpy", "torch"):
        spec = importlib.util.find_spec(name)
        if spec and spec.origin:
            d = str(Path(spec.origin).resolve().parent.parent)
            if d not in dirs:
                dirs.append(d)
    return dirs


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
    """One submission's child interpreter; ``call`` restarts it after a timeout or crash."""

    def __init__(self, module_path: str | Path, functions: list[str], limits: Limits = Limits()):
        self.source = Path(module_path)
        self.functions = list(functions)
        self.limits = limits
        self.captured = Captured(limits.output_bytes)
        self.restarts = 0
        self.load: Outcome | None = None
        self._proc: subprocess.Popen | None = None
        self._tmp = Path(tempfile.mkdtemp(prefix="grader-"))
        self._next_id = 0
        self._site_dirs = site_dirs()
        self._module_path = self._tmp / "student.py"
        shutil.copyfile(self.source, self._module_path)
        os.chmod(self._tmp, 0o755)
        os.chmod(self._module_path, 0o644)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Outcome:
        """Start a fresh child and import the submission in it."""
        self._kill()
        token = secrets.token_bytes(16)
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self._tmp),
            "TMPDIR": str(self._tmp),
            "LANG": "C.UTF-8",
            # One thread each: predictable timing, and --jobs N children do not fight over cores.
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(RUNNER), str(req_r), str(resp_w)],
                pass_fds=(req_r, resp_w),
                cwd=self._tmp,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        finally:
            os.close(req_r)
            os.close(resp_w)
        self._token, self._req_w, self._resp_r = token, req_w, resp_r
        self._buffer = bytearray()
        pid = self._proc.pid
        # Limits go on before the child reads its first frame, i.e. before any student code runs.
        lim = self.limits
        for which, value in (
            (resource.RLIMIT_AS, lim.memory_bytes),
            (resource.RLIMIT_CPU, lim.cpu_seconds),
            (resource.RLIMIT_FSIZE, lim.file_bytes),
            (resource.RLIMIT_CORE, 0),
        ):
            try:
                resource.prlimit(pid, which, (value, value))
            except (ProcessLookupError, PermissionError):
                pass
        config = {
            "site_dirs": self._site_dirs,
            "module_path": str(self._module_path),
            "functions": self.functions,
            "max_entries": lim.max_entries,
        }
        try:
            self._send(config)
            header, _ = self._receive(time.monotonic() + lim.import_timeout)
        except TimeoutError:
            self._kill()
            self.load = Outcome("timeout")
            return self.load
        except (EOFError, BrokenPipeError, ProtocolError) as exc:
            code = self._kill()
            self.load = Outcome("crash" if not isinstance(exc, ProtocolError) else "protocol", exit_code=code)
            return self.load
        if header.get("ready") is True:
            names = header.get("functions")
            functions = tuple(f for f in self.functions if isinstance(names, list) and f in names)
            self.load = Outcome("ok", functions=functions)
        else:
            self._kill()
            self.load = Outcome("error", **_error_fields(header))
        return self.load

    def close(self) -> None:
        self._kill()
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _kill(self) -> int | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: threads, forks and all
        except (ProcessLookupError, PermissionError):
            pass
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        for stream in (proc.stdout, proc.stderr):
            stream.close()
        for fd in (self._req_w, self._resp_r):
            try:
                os.close(fd)
            except OSError:
                pass
        return code

    # ------------------------------------------------------------------ calls
    def call(self, function: str, args: list[Any], kwargs: dict[str, Any] | None = None) -> Outcome:
        if self._proc is None:
            if self.load is not None and self.load.status != "ok":
                return Outcome("not_loaded")
            if self.restarts >= self.limits.max_restarts:
                return Outcome("not_loaded")
            self.restarts += 1
            if self.start().status != "ok":
                return Outcome("not_loaded")
        self._next_id += 1
        call_id = self._next_id
        enc_args, enc_kwargs, blob = encode_args(args, kwargs or {})
        try:
            self._send({"id": call_id, "function": function, "args": enc_args, "kwargs": enc_kwargs}, blob)
            deadline = time.monotonic() + self.limits.call_timeout
            header, payload = self._receive(deadline)
            while type(header.get("id")) is int and header["id"] < call_id:
                header, payload = self._receive(deadline)  # a late (or forged) second answer to an earlier call
        except TimeoutError:
            self._kill()
            return Outcome("timeout")
        except (EOFError, BrokenPipeError) as exc:
            return Outcome("crash", exit_code=self._kill(), error=str(exc))
        except ProtocolError as exc:
            self._kill()
            return Outcome("protocol", error=str(exc))
        if header.get("id") != call_id:
            self._kill()
            return Outcome("protocol", error="answer to another call")
        if header.get("ok") is True:
            return self._array(header, payload)
        if "too_big" in header:
            return Outcome("too_big", error=str(header["too_big"])[:20])
        return Outcome("error", **_error_fields(header))

    def _array(self, header: dict, payload: bytes) -> Outcome:
        shape = header.get("shape")
        if not (isinstance(shape, list) and len(shape) <= 8 and all(type(s) is int and 0 <= s <= self.limits.max_entries for s in shape)):
            return Outcome("protocol", error="bad shape")
        size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if size > self.limits.max_entries or len(payload) != 8 * size:
            return Outcome("protocol", error="size does not match shape")
        value = np.frombuffer(payload, dtype=np.float64).reshape(shape).copy()
        return Outcome("ok", value=value, dtype=str(header.get("dtype", ""))[:40])

    # ------------------------------------------------------------------ frames
    def _send(self, header: dict, blob: bytes = b"") -> None:
        data = json.dumps(header).encode()
        frame = _HEAD.pack(self._token, len(data), len(blob)) + data + blob
        view = memoryview(frame)
        while view:
            view = view[os.write(self._req_w, view):]

    def _receive(self, deadline: float) -> tuple[dict, bytes]:
        """Read one frame from the child's pipe, draining its stdout/stderr meanwhile."""
        proc = self._proc
        sel = selectors.DefaultSelector()
        sel.register(self._resp_r, selectors.EVENT_READ, "frame")
        sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
        sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
        try:
            while True:
                frame = self._parse()
                if frame is not None:
                    return frame
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                for key, _ in sel.select(timeout=left):
                    fd = key.fileobj if isinstance(key.fileobj, int) else key.fileobj.fileno()
                    data = os.read(fd, 1 << 16)
                    if key.data == "frame":
                        if not data:
                            raise EOFError("the child closed its pipe")
                        self._buffer.extend(data)
                    elif data:
                        self.captured.add(key.data, data)
                    else:
                        sel.unregister(key.fileobj)
        finally:
            sel.close()

    def _parse(self) -> tuple[dict, bytes] | None:
        buf = self._buffer
        if len(buf) < _HEAD.size:
            return None
        token, header_len, blob_len = _HEAD.unpack_from(buf)
        if not secrets.compare_digest(token, self._token):
            raise ProtocolError("a frame without this run's token")
        if header_len > _MAX_HEADER or blob_len > 8 * self.limits.max_entries:
            raise ProtocolError("a frame larger than allowed")
        end = _HEAD.size + header_len + blob_len
        if len(buf) < end:
            return None
        try:
            header = json.loads(bytes(buf[_HEAD.size:_HEAD.size + header_len]))
        except ValueError:
            raise ProtocolError("a header that is not JSON") from None
        if not isinstance(header, dict):
            raise ProtocolError("a header that is not an object")
        payload = bytes(buf[_HEAD.size + header_len:end])
        del buf[:end]
        return header, payload


def _error_fields(header: dict) -> dict:
    """Only plain strings and ints from an error header, whatever else it holds."""
    line = header.get("line")
    return {
        "error": str(header.get("error", ""))[:600],
        "error_type": str(header.get("error_type", ""))[:60],
        "line": line if type(line) is int else None,
        "stage": str(header.get("stage", ""))[:10],
    }
