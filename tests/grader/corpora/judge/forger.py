"""Answers each call of ``forge`` with the forged frame FORGERIES[k] (k is the call's argument), written with
the run's token found in the child runner's frame, before the runner's own answer."""
import json
import os
import struct
import sys

FORGERIES = [
    ("json", {"ok": True, "shape": [10**6, 10**6], "dtype": "float64"}, 0),  # far past the entry cap
    ("json", {"ok": True, "shape": [0, 2**40], "dtype": "float64"}, 0),  # empty, but a dimension past the cap
    ("json", {"ok": True, "shape": [2**19] * 4, "dtype": "float64"}, 0),  # a size that wraps int64 to 0
    ("json", {"ok": True, "shape": [1] * 65, "dtype": "float64"}, 8),  # a rank past numpy's
    ("json", {"ok": True, "shape": "(2, 2)", "dtype": "float64"}, 32),  # a shape that is a string
    ("json", {"ok": True, "shape": [2, 2.0], "dtype": "float64"}, 32),  # a size that is a float
    ("json", {"ok": True, "shape": [2, -2], "dtype": "float64"}, 32),  # a negative size
    ("json", {"ok": True, "shape": [2, 2], "dtype": "float64"}, 8),  # fewer bytes than the shape says
    ("json", {"ok": True, "shape": [2, 2], "dtype": "float64"}, 64),  # more bytes than the shape says
    ("raw", b"\xff\xfe{ not json", 0),  # a header that is not JSON
    ("raw", b"[1, 2, 3]", 0),  # a header that is not an object
    ("raw", b"[" * 100_000, 0),  # nested deeper than a parser goes
    ("lengths", (2**31, 0), 0),  # a declared header of 2 GiB
    ("lengths", (16, 2**60), 0),  # a declared blob of 2**60 bytes
    ("json", {"helper": "softmax", "args": [], "kwargs": {}}, 0),  # a helper request in a call that offered none
    ("json", {"ok": True, "shape": [1] * 10, "dtype": {"not": "a name"}}, 8),  # rank 10, odd dtype: a number
    ("json", {"ok": False, "error": [[[]]], "error_type": 7, "stage": ["x"], "line": 10**4000}, 0),  # odd error
    ("json", {"ok": False, "too_big": {"entries": -1}}, 0),  # an odd too_big
    ("token", {"ok": True, "shape": [1], "dtype": "float64"}, 8),  # another token
]


def forge(k):
    caller = sys._getframe(1)
    token, out_fd, call_id = caller.f_locals["token"], caller.f_locals["out_fd"], caller.f_locals["call_id"]
    kind, what, blob_bytes = FORGERIES[k]
    blob = b"\x00" * blob_bytes
    if kind == "lengths":
        frame = struct.pack("<16sIQ", token, *what)
    else:
        header = what if kind == "raw" else json.dumps({"id": call_id, **what}).encode()
        frame = struct.pack("<16sIQ", bytes(16) if kind == "token" else token, len(header), len(blob)) + header + blob
    os.write(out_fd, frame)
    return [[0.0]]


def fine(n):
    return [[float(n)]]


def echo(x):
    return x
