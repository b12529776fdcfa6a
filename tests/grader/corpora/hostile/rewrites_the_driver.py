"""Hostile: at its first call, rewrites every object of the in-sandbox driver it can reach: every function
of the runner's folder (grader/sandbox/inside: every module's, and every closure cell of every runner function
the garbage collector knows, the frame encoder and the answer sender included) becomes one that writes a forged
frame with the run's token (found in the runner's frame) and returns nothing. The forgeries: shapes far past the entry
cap, ranks past the cap, sizes that are not ints, a dimension of 2**40 in an empty array, bytes that are
not JSON, declared lengths of 2**31 and 2**60, a helper request in a call that offered none, an error
line of 4,001 digits, a too_big that is an object. It implements nothing: expected 0."""
import gc
import json
import os
import struct
import sys
import types

FORGERIES = [
    {"ok": True, "shape": [10**6, 10**6], "dtype": "float64"},
    {"ok": True, "shape": [0, 2**40], "dtype": "float64"},
    {"ok": True, "shape": [1] * 40, "dtype": "float64"},
    {"ok": True, "shape": "(2, 2)", "dtype": {"not": "a name"}},
    {"ok": True, "shape": [[2], 2.5], "dtype": "float64"},
    b"\xff\xfe{not json",
    (2**31, 0),
    (16, 2**60),
    {"helper": "softmax", "args": [{"kind": "matrix", "shape": [10**6, 10**6], "offset": 0}], "kwargs": {}},
    {"ok": False, "stage": ["call"], "error": [[[]]], "error_type": 7, "line": 10**4000},
    {"ok": False, "too_big": {"entries": -1}},
]
_state = {}


def _forge(*args, **kwargs):
    token, out_fd, call_id = _state["token"], _state["out_fd"], _state["call_id"]
    forgery = FORGERIES[_state["next"] % len(FORGERIES)]
    _state["next"] += 1
    if isinstance(forgery, tuple):  # declared lengths only
        frame = struct.pack("<16sIQ", token, *forgery)
    else:
        header = forgery if isinstance(forgery, bytes) else json.dumps({"id": call_id, **forgery}).encode()
        frame = struct.pack("<16sIQ", token, len(header), 0) + header
    try:
        os.write(out_fd, frame)
    except OSError:
        pass


def _rewrite_the_driver(pick):
    frame = sys._getframe()
    while frame is not None and "out_fd" not in frame.f_locals:
        frame = frame.f_back
    _state.update(token=frame.f_locals["token"], out_fd=frame.f_locals["out_fd"],
                  call_id=frame.f_locals.get("call_id", 0), next=pick)
    runner_folder = os.path.dirname(frame.f_code.co_filename)
    runners = [sys.modules.get("__main__")] + [m for m in gc.get_objects() if isinstance(m, types.ModuleType)
                                              and os.path.dirname(vars(m).get("__file__") or "") == runner_folder]
    for runner in runners:
        for name, value in list(vars(runner).items()):
            if callable(value) and not isinstance(value, type):
                setattr(runner, name, _forge)
    for obj in gc.get_objects():
        code = getattr(obj, "__code__", None)
        if code is None or os.path.dirname(code.co_filename) != runner_folder:
            continue
        for cell in obj.__closure__ or ():
            try:
                if callable(cell.cell_contents) and not isinstance(cell.cell_contents, type):
                    cell.cell_contents = _forge
            except ValueError:  # an empty cell
                pass


def _attack(*args, **kwargs):
    shapes = [getattr(a, "shape", ()) for a in args]
    _rewrite_the_driver(sum(sum(s) for s in shapes if s))
    return None


project = scaled_scores = causal_mask = softmax = _attack
attention_weights = attention_head = multi_head_attention = _attack
