"""One submission inside its sandbox: load the student's file, then answer the grader's calls until the pipe closes.

Run in the fork the server makes (``server.py``), or as the whole child in the trusted and uid modes
(``__main__.py``), once the process is confined. It speaks the wire of ``wire.py`` (frames, values, answers:
described there once) and judges nothing: the expected answers, the reference and the case generator are never
sent here; the grader parses the numbers and compares them itself, and computes a helper's value itself when
it stands in for one of the submission's (attribution). Nothing the student's code can read or forge here is
worth any points.
"""

import builtins
import importlib.util
import json
import os
import sys
import traceback

from . import loading, wire

_ABSENT = object()  # a name the submission's module did not define


def _prepare_harness(config):
    """The driver's entry points for question 2 (``grader/module/harness.py``'s source), run before the
    submission is imported. Nothing of the reference comes with it: attribution asks the grader for a
    helper's value (``helpers`` in a call), it never runs the reference here."""
    if not config.get("harness"):
        return None
    harness = {"__name__": "_grader_harness"}
    exec(compile(config["harness"], "harness.py", "exec"), harness)
    return harness


def _bind_harness(harness, module):
    """The entry points, reachable by name as the submission's functions are; a submission that broke what
    this needs loses the entry points (its module checks fail), never the child."""
    if harness is None:
        return
    try:
        harness["student"] = module
        for name, function in harness["EXPORTS"].items():
            module.__dict__[name] = function
    except BaseException:  # noqa: BLE001 - e.g. a module object whose __dict__ the submission replaced
        pass


def _become_r(token, config, in_fd, out_fd):
    """An R hand-in: this process becomes R running ``r_runner.R`` (its source came in the config), which
    reads the requests on fd 0 and writes the answers on fd 3, on the same wire. Nothing of the student's
    has run yet; the limits, namespaces and memory cgroup already apply and stay with the new program."""
    r = config.pop("r")
    runner, settings = os.path.abspath(".grader_runner.R"), os.path.abspath(".grader_config.json")
    with open(runner, "w", encoding="utf-8") as f:
        f.write(config.pop("r_runner"))
    with open(settings, "w", encoding="utf-8") as f:
        json.dump({**config, "token": token.hex()}, f)
    requests, answers = os.dup(in_fd), os.dup(out_fd)  # first out of the way of 0 and 3
    os.dup2(requests, 0)
    os.dup2(answers, 3)
    env = {**r["env"], "HOME": os.getcwd(), "TMPDIR": os.getcwd()}
    os.execve(r["exec"], ["R", "--vanilla", "--no-echo", "-f", runner, "--args", settings], env)


def serve_submission(in_fd, out_fd):
    """Import the student's module (sent in the first frame) and answer calls until the pipe closes."""
    token, config, source = wire.read_frame(in_fd)
    if config.get("language") == "r":
        _become_r(token, config, in_fd, out_fd)

    # Keep private copies of everything used after the student's module is imported, so that
    # monkeypatching builtins, json or numpy there can at worst break this child (failing checks),
    # never change what the numbers say.
    read_exact, write_all, pack = wire.read_exact, wire.write_all, wire.FRAME_HEAD.pack
    dumps, loads = json.dumps, json.loads
    fmt_exc, extract_tb = traceback.format_exception_only, traceback.extract_tb
    real_builtins = dict(builtins.__dict__)
    restore_builtins = builtins.__dict__.update

    def send(header, blob=b""):
        restore_builtins(real_builtins)
        for stream in (sys.stdout, sys.stderr):  # so that the student's prints show up in order
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - a replaced or closed stream is the student's business
                pass
        data = dumps(header).encode()
        write_all(out_fd, pack(token, len(data), len(blob)) + data + blob)

    sys.meta_path.insert(0, loading.BlockGraderPackages())
    sys.path[:] = [p for p in sys.path if p] + [p for p in config["site_dirs"] if p not in sys.path]
    import numpy as np

    asarray, float64 = np.asarray, np.float64
    encode, decode, array_of, json_kind = wire.encode_values, wire.decode_values, wire.array_from, wire.ANSWER_JSON
    unpack, head_size = wire.FRAME_HEAD.unpack, wire.FRAME_HEAD.size
    max_entries = int(config["max_entries"])
    module_path = os.path.abspath("student.py")
    with open(module_path, "wb") as f:
        f.write(source)
    cells = config.get("cells") or [{"source": source.decode("utf-8", "replace"), "line": 1, "cell": None}]
    own_files = {module_path, "<cell>"}
    for name, text in config.get("helpers", []):  # the student's helper modules, importable by name
        helper = os.path.abspath(f"{name}.py")
        with open(helper, "w", encoding="utf-8") as f:
            f.write(text)
        own_files.add(helper)
    sys.path.append(os.getcwd())
    sys.meta_path.insert(1, loading.AllowedImports(config["imports"], own_files, os.getcwd()))
    loading.install_jupyter_stubs()
    real_builtins = dict(builtins.__dict__)  # taken again: the stubs are part of what every call restores

    def helper(call_id, name):
        """What the submission's module holds under ``name`` during a call that names it among its helpers:
        the grader computes the value outside and answers; a refusal raises here, in the submission's call."""
        def ask_the_grader(*args, **kwargs):
            enc_args, enc_kwargs, blob = encode(args, kwargs, np)
            send({"id": call_id, "helper": name, "args": enc_args, "kwargs": enc_kwargs}, blob)
            _, header_len, blob_len = unpack(read_exact(in_fd, head_size))
            answer = loads(read_exact(in_fd, header_len))
            data = read_exact(in_fd, blob_len)
            if answer.get("ok") is True:
                return array_of(answer["shape"], data, 0, np, [max_entries])
            raise ValueError(f"{name}: {answer.get('error', '')}")

        ask_the_grader.__name__ = ask_the_grader.__qualname__ = name
        return ask_the_grader

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
                if frame.filename == module_path:
                    where = frame.lineno
        return {"error": line, "error_type": type(exc).__name__, "line": where}

    harness = _prepare_harness(config)  # before the submission runs, so that nothing it patches is used here
    answers_json = frozenset(harness["EXPORTS"]) if harness is not None else frozenset()
    loading.forget_grader_modules()
    spec = importlib.util.spec_from_file_location("student", module_path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update({"__file__": module_path, "__builtins__": builtins})
    sys.modules["student"] = module
    try:
        failed, skipped = loading.load_tolerantly(module, module_path, cells,
                                                  float(config.get("statement_seconds", 1e9)),
                                                  float(config.get("load_seconds", 1e9)), describe)
    except BaseException as exc:  # noqa: BLE001 - anything at import is the student's error to read
        failed, skipped = exc, []
    if failed is not None:
        send({"ready": False, **describe(failed)})
        return
    names = [n for n in config["functions"] if callable(getattr(module, n, None))]
    restore_builtins(real_builtins)
    _bind_harness(harness, module)
    send({"ready": True, "functions": names, "skipped": skipped})

    while True:
        try:
            _, header_len, blob_len = unpack(read_exact(in_fd, head_size))
        except EOFError:
            return
        restore_builtins(real_builtins)
        request = loads(read_exact(in_fd, header_len))
        blob = read_exact(in_fd, blob_len)
        call_id = request["id"]
        stage, dtype = "call", ""
        stand_ins = {name: module.__dict__.get(name, _ABSENT) for name in request.get("helpers", ())}
        try:
            func = getattr(module, request["function"])
            args, kwargs = decode(request["args"], request["kwargs"], blob, np, len(blob) // 8)  # all it holds
            for name in stand_ins:
                module.__dict__[name] = helper(call_id, name)
            try:
                value = func(*args, **kwargs)
            finally:
                for name, own in stand_ins.items():
                    if own is _ABSENT:
                        module.__dict__.pop(name, None)
                    else:
                        module.__dict__[name] = own
            stage = "convert"
            if request["function"] in answers_json and type(value) is dict:  # the driver's description (wire.py)
                send({"id": call_id, "ok": True, "kind": json_kind}, dumps(value).encode())
                continue
            dtype = str(getattr(value, "dtype", type(value).__name__))[:40]
            if hasattr(value, "detach"):  # a torch tensor: leave autograd and the GPU behind
                value = value.detach().cpu()
            array = asarray(value, dtype=float64, order="C")  # a scalar stays 0-D: checks.py names it so
            if array.size > max_entries:
                send({"id": call_id, "ok": False, "too_big": int(array.size)})
                continue
            send({"id": call_id, "ok": True, "shape": [int(s) for s in array.shape], "dtype": dtype}, array.tobytes())
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
            try:
                send({"id": call_id, "ok": False, "stage": stage, "dtype": dtype, **describe(exc)})
            except BaseException:  # noqa: BLE001 - the student broke json or the pipe: the parent sees a crash
                os._exit(3)
