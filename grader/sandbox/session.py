"""One submission's session with its sandbox: run the student's module in its own process tree and bring
back only numbers.

How the process tree is started and isolated lives in ``launch.py`` and ``isolation.py`` beside this
module; this module speaks to it. ``Sandbox``:

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
  nothing but JSON headers and raw float64 bytes, every field checked (type, rank, size) before use: a
  frame that is not what ``inside/wire.py``'s docstring describes is a protocol error, never a crash;
- answers a call's helper requests (``Helpers``) in this process: the child asks, the grader computes.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import selectors
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from grader.sandbox.child import Child, LaunchError
from grader.sandbox.child_config import child_config, skipped_fields
from grader.sandbox.inside.wire import (
    ANSWER_JSON,
    FRAME_HEAD,
    MAX_HEADER,
    WireError,
    array_from,
    decode_values,
    encode_values,
    json_from,
)
from grader.sandbox.launch import Launcher, launcher, preload_for
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status
from grader.sandbox.printable import printable

if TYPE_CHECKING:
    from grader.intake.handin import HandIn

MAX_HELPER_REQUESTS = 256  # helper requests answered in one call; later ones are refused
_MAX_LINE = 10**7  # a line number beyond any file the intake accepts is not one
_DEFAULT_LIMITS = Limits()  # frozen: one instance serves every default
CRASH_GRACE = 1.0  # seconds a child that closed its pipe gets to exit, so that its signal can be named


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


class HelperRefused(Exception):
    """A helper request the grader will not answer; the message is what the child's call raises."""


class Helpers(Protocol):
    """What stands in for some of the submission's functions during one call (``Sandbox.call``): the child
    sends each call of them here, ``answer`` computes the value in the grader's process from arguments
    already decoded and checked for size, and raises HelperRefused for anything it will not compute."""

    names: tuple[str, ...]

    def answer(self, name: str, args: list, kwargs: dict) -> np.ndarray: ...


def encode_args(args: list[Any], kwargs: dict[str, Any]) -> tuple[list, dict, bytes]:
    """Inputs as JSON descriptors plus one blob of float64 bytes (``inside/wire.encode_values``)."""
    return encode_values(args, kwargs, np)


class Sandbox:
    """One submission's child; ``call`` restarts it after a timeout or crash.

    ``handin`` is what the intake made of the submission (``grader.intake``: a path is read there, never here).
    ``spawner`` is a launcher from ``grader.sandbox.launch`` (shared by a batch); without one, the sandbox
    makes its own for ``isolation`` and closes it with itself. ``imports``: the packages the submission may
    import besides the standard library (the rubric's, ``grader.rubric.Rubric.imports``).
    """

    def __init__(self, handin: HandIn, functions: list[str], limits: Limits = _DEFAULT_LIMITS,
                 spawner: Launcher | None = None, isolation: str = "namespaces", harness: dict | None = None, *,
                 imports: tuple[str, ...]):
        self.handin, self.imports = handin, tuple(imports)
        self.source = self.handin.source().encode()
        self.harness = harness or {}  # grader/module/harness.py's sources, run beside the submission
        self.functions = list(functions)
        self.limits = limits
        self.captured = Captured(limits.output_bytes)
        self.restarts = 0
        self.timeouts = 0  # the import or a call ran out of time (a batch grades such a submission again, alone)
        self.loaded: Outcome | None = None
        self._own_spawner = spawner is None
        self._spawner = launcher(isolation, preload_for([self.source]), self.imports) if spawner is None else spawner
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
            self.loaded = Outcome(Status.TIMEOUT)
            return self.loaded
        self._child = self._spawner.spawn(lim)
        self._token = secrets.token_bytes(16)
        self._buffer = bytearray()
        config = {"site_dirs": self._spawner.site_dirs, "functions": self.functions, "max_entries": lim.max_entries,
                  **self.harness, **child_config(self.handin, lim.import_timeout, self.imports)}
        try:
            deadline = self._bounded(time.monotonic() + lim.import_timeout)
            self._send(config, self.source, deadline)
            header, _ = self._receive(deadline)
        except TimeoutError:
            self._kill()
            self.timeouts += 1
            self.loaded = Outcome(Status.TIMEOUT)
            return self.loaded
        except (EOFError, BrokenPipeError, ProtocolError) as exc:
            code = self._kill(CRASH_GRACE)
            status = Status.PROTOCOL if isinstance(exc, ProtocolError) else Status.CRASH
            self.loaded = Outcome(status, exit_code=code)
            return self.loaded
        if header.get("ready") is True:
            names = header.get("functions")
            functions = tuple(f for f in self.functions if isinstance(names, list) and f in names)
            self.loaded = Outcome(Status.OK, functions=functions, skipped=_skipped(header))
        else:
            self._kill()
            self.loaded = Outcome(Status.ERROR, **_error_fields(header))
        return self.loaded

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
    def call(self, function: str, args: list[Any], kwargs: dict[str, Any] | None = None,
             helpers: Helpers | None = None) -> Outcome:
        """Call the submission's ``function``; with ``helpers``, its module's functions of those names are
        answered by ``helpers`` here, in the grader, for the length of the call."""
        if self._child is None:
            if self.loaded is not None and self.loaded.status is not Status.OK:
                return Outcome(Status.NOT_LOADED)
            if self.restarts >= self.limits.max_restarts or time.monotonic() >= self._deadline:
                return Outcome(Status.NOT_LOADED)
            self.restarts += 1
            if self.start().status is not Status.OK:
                return Outcome(Status.NOT_LOADED)
        self._next_id += 1
        call_id = self._next_id
        enc_args, enc_kwargs, blob = encode_args(args, kwargs or {})
        request = {"id": call_id, "function": function, "args": enc_args, "kwargs": enc_kwargs}
        if helpers is not None:
            request["helpers"] = list(helpers.names)
        try:
            deadline = self._bounded(time.monotonic() + self.limits.call_timeout)
            self._send(request, blob, deadline)
            asked = 0
            while True:
                header, payload = self._receive(deadline)
                if type(header.get("id")) is int and header["id"] < call_id:
                    continue  # a late (or forged) second answer to an earlier call
                if "helper" not in header:
                    break
                if helpers is None or header.get("id") != call_id:
                    raise ProtocolError("a helper request outside a call that named helpers")
                asked += 1
                self._send(*self._helper_answer(helpers, header, payload, asked), deadline)
        except TimeoutError:
            self._kill()
            self.timeouts += 1
            return Outcome(Status.TIMEOUT)
        except (EOFError, BrokenPipeError) as exc:
            code = self._kill(CRASH_GRACE)
            if not self._spawner.alive():
                raise LaunchError("the sandbox server died while this submission ran") from exc
            return Outcome(Status.CRASH, exit_code=code, error=str(exc))
        except ProtocolError as exc:
            self._kill()
            return Outcome(Status.PROTOCOL, error=str(exc))
        if header.get("id") != call_id:
            self._kill()
            return Outcome(Status.PROTOCOL, error="answer to another call")
        if header.get("ok") is True and header.get("kind") == ANSWER_JSON:
            return self._json(payload)
        if header.get("ok") is True:
            return self._array(header, payload)
        if "too_big" in header:
            return Outcome(Status.TOO_BIG, error=printable(str(header["too_big"])[:20]))
        return Outcome(Status.ERROR, **_error_fields(header))

    def _array(self, header: dict, payload: bytes) -> Outcome:
        """The answer's array, from a shape checked before anything is allocated (``inside/wire.array_from``):
        any rank up to MAX_RANK, dimensions below 2**31 (an empty answer may have any, e.g. (2_000_000, 0)),
        at most ``max_entries`` entries, exactly as many bytes as it says."""
        try:
            value = array_from(header.get("shape"), payload, 0, np, [self.limits.max_entries])
            if len(payload) != 8 * value.size:
                raise WireError("size does not match shape")
        except WireError as exc:
            return Outcome(Status.PROTOCOL, error=str(exc))
        return Outcome(Status.OK, value=value, dtype=printable(str(header.get("dtype", ""))[:40]))

    @staticmethod
    def _json(payload: bytes) -> Outcome:
        """A JSON answer (only the grader's own entry points give one): its value, parsed from at most
        ``MAX_JSON`` bytes, as the outcome's ``value``; the caller checks every field of it."""
        try:
            return Outcome(Status.OK, value=json_from(payload), dtype=ANSWER_JSON)
        except WireError as exc:
            return Outcome(Status.PROTOCOL, error=str(exc))

    def _helper_answer(self, helpers: Helpers, header: dict, payload: bytes, asked: int) -> tuple[dict, bytes]:
        """The answer frame to one helper request: the value ``helpers`` computes here, or a refusal. The
        request is hostile data: a name this call did not offer, or arguments that are not values within
        the caps, is a protocol error; too many requests, or arguments the helper will not take, a refusal."""
        call_id = header["id"]
        name = header.get("helper")
        if type(name) is not str or name not in helpers.names:
            raise ProtocolError("a helper this call did not offer")
        try:
            args, kwargs = decode_values(header.get("args"), header.get("kwargs"), payload, np,
                                         self.limits.max_entries)
        except WireError as exc:
            raise ProtocolError(f"a helper request that is not values: {exc}") from None
        try:
            if asked > MAX_HELPER_REQUESTS:
                raise HelperRefused(f"more than {MAX_HELPER_REQUESTS} requests in one call")
            value = np.ascontiguousarray(helpers.answer(name, args, kwargs), dtype="<f8")
            if value.size > self.limits.max_entries:
                raise HelperRefused("an answer larger than allowed")
        except HelperRefused as exc:
            return {"id": call_id, "ok": False, "error": str(exc)[:300]}, b""
        except Exception as exc:  # noqa: BLE001 - whatever the arguments make the helper raise is the child's answer
            return {"id": call_id, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}, b""
        return {"id": call_id, "ok": True, "shape": list(value.shape), "dtype": "float64"}, value.tobytes()

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
        if header_len > MAX_HEADER or blob_len > 8 * self.limits.max_entries:
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
    line = line if type(line) is int and 0 < line < _MAX_LINE else None
    return {
        "error": printable(str(header.get("error", ""))[:600]),
        "error_type": printable(str(header.get("error_type", ""))[:60]),
        "line": line,
        "stage": printable(str(header.get("stage", ""))[:10]),
        "dtype": printable(str(header.get("dtype", ""))[:40]),
    }


def _skipped(header: dict) -> tuple[dict, ...]:
    """The skipped statements the load reports, each field checked; a list the checks cannot read is none."""
    try:
        skipped = skipped_fields(header)
    except (ValueError, TypeError, OverflowError, RecursionError):  # e.g. seconds as an int of 400 digits
        return ()
    return tuple({**s, "line": s["line"] if type(s["line"]) is int and 0 < s["line"] < _MAX_LINE else None,
                  "seconds": s["seconds"] if math.isfinite(s["seconds"]) else 0.0} for s in skipped)

