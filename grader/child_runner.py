"""The child side of the sandbox: import one student's module and serve calls over a private pipe.

Run by the parent as ``python -I -S child_runner.py IN_FD OUT_FD``. This file imports only the
standard library (and numpy once the parent has said where it lives); it never imports ``grader``
or ``mha``, which are blocked here on purpose.

Frames in both directions: 16-byte token | u32 header length | u64 blob length | JSON header | blob.
Requests carry the inputs (matrices as raw float64 in the blob); answers carry only plain numbers
(the result as raw float64, its shape and its original dtype name), or an error message. The
expected answers are never sent here, so nothing the student's code can read or forge here is
worth any points: the parent parses the numbers and compares them itself.
"""

import builtins
import importlib.abc
import importlib.util
import json
import os
import struct
import sys
import traceback

_HEAD = struct.Struct("<16sIQ")
_BLOCKED = ("grader", "mha")


class _BlockGraderPackages(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: the grader's own packages cannot be imported by student code."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in _BLOCKED:
            raise ImportError(
                f"the package '{name.split('.')[0]}' belongs to the grader and cannot be imported by a submission",
                name=name,
            )
        return None


def _read_exact(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("the grader closed the pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def main():
    in_fd, out_fd = int(sys.argv[1]), int(sys.argv[2])
    token, header_len, blob_len = _HEAD.unpack(_read_exact(in_fd, _HEAD.size))
    config = json.loads(_read_exact(in_fd, header_len))
    _read_exact(in_fd, blob_len)

    # Keep private copies of everything used after the student's module is imported, so that
    # monkeypatching builtins, json or numpy there can at worst break this child (failing checks),
    # never change what the numbers say.
    read_exact, write_all, pack, dumps, loads = _read_exact, _write_all, _HEAD.pack, json.dumps, json.loads
    fmt_exc, extract_tb = traceback.format_exception_only, traceback.extract_tb
    real_builtins = dict(builtins.__dict__)
    restore_builtins = builtins.__dict__.update

    def send(header, blob=b""):
        restore_builtins(real_builtins)
        for stream in (sys.stdout, sys.stderr):  # so that the student's prints show up in order
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - a replaced or closed stream is the student's business
                pass  # json and friends rely on isinstance, len, ... being the real ones
        data = dumps(header).encode()
        write_all(out_fd, pack(token, len(data), len(blob)) + data + blob)

    sys.meta_path.insert(0, _BlockGraderPackages())
    sys.path[:] = [p for p in sys.path if p] + list(config["site_dirs"])
    import numpy as np

    asarray, frombuffer, float64, ascontiguous = np.asarray, np.frombuffer, np.float64, np.ascontiguousarray
    max_entries = int(config["max_entries"])

    def decode(arg, blob):
        kind = arg["kind"]
        if kind == "matrix":
            rows, cols = arg["shape"]
            start = arg["offset"]
            return frombuffer(blob[start:start + rows * cols * 8], dtype=float64).reshape(rows, cols).copy()
        if kind == "list":
            return [decode(item, blob) for item in arg["items"]]
        return arg["value"]  # int or bool

    def describe(exc):
        """The student-facing one-line error and the last line of the submission it went through."""
        restore_builtins(real_builtins)
        where = None
        if isinstance(exc, SyntaxError):
            line = f"{type(exc).__name__}: {exc.msg}"
            where = exc.lineno
        else:
            line = " ".join("".join(fmt_exc(type(exc), exc)).split())[-600:]
            for frame in extract_tb(exc.__traceback__):
                if frame.filename == config["module_path"]:
                    where = frame.lineno
        return {"error": line, "error_type": type(exc).__name__, "line": where}

    try:
        spec = importlib.util.spec_from_file_location("student", config["module_path"])
        module = importlib.util.module_from_spec(spec)
        sys.modules["student"] = module
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - anything at import is the student's error to read
        send({"ready": False, **describe(exc)})
        return
    names = [n for n in config["functions"] if callable(getattr(module, n, None))]
    send({"ready": True, "functions": names})

    while True:
        try:
            _, header_len, blob_len = _HEAD.unpack(read_exact(in_fd, _HEAD.size))
        except EOFError:
            return
        restore_builtins(real_builtins)
        request = loads(read_exact(in_fd, header_len))
        blob = read_exact(in_fd, blob_len)
        call_id = request["id"]
        stage = "call"
        try:
            func = getattr(module, request["function"])
            args = [decode(a, blob) for a in request["args"]]
            kwargs = {k: decode(a, blob) for k, a in request["kwargs"].items()}
            value = func(*args, **kwargs)
            stage = "convert"
            dtype = str(getattr(value, "dtype", type(value).__name__))[:40]
            if hasattr(value, "detach"):  # a torch tensor: leave autograd and the GPU behind
                value = value.detach().cpu()
            array = ascontiguous(asarray(value, dtype=float64))
            if array.size > max_entries:
                send({"id": call_id, "ok": False, "too_big": int(array.size)})
                continue
            send({"id": call_id, "ok": True, "shape": [int(s) for s in array.shape], "dtype": dtype}, array.tobytes())
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
            try:
                send({"id": call_id, "ok": False, "stage": stage, **describe(exc)})
            except BaseException:  # noqa: BLE001 - the student broke json or the pipe: the parent sees a crash
                os._exit(3)


if __name__ == "__main__":
    main()
