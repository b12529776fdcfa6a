"""Asks the grader for helper values in every way a submission can, during a call that offers softmax and
causal_mask: each attempt's outcome is one number of the answer (1: a right value came back, 2: refused,
3: something else came back). ``forge_request`` instead writes a forged helper request with the token."""
import json
import os
import struct
import sys

import numpy as np


def _try(ask, check):
    try:
        return 1.0 if check(ask()) else 3.0
    except ValueError:
        return 2.0


def _stand_in(name):
    """The module's ``name`` as the call finds it: the grader's stand-in (this file defines neither)."""
    return globals()[name]


def attention_weights(Q, K, causal=True):
    softmax, causal_mask = _stand_in("softmax"), _stand_in("causal_mask")
    S = np.array([[1.0, 2.0], [3.0, 5.0]])
    want = np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)
    codes = [
        _try(lambda: softmax(S), lambda got: np.allclose(got, want)),
        _try(lambda: causal_mask(3), lambda got: got.shape == (3, 3) and np.isneginf(got[0, 1])),
        _try(lambda: causal_mask(10**9), lambda got: True),  # 10**18 entries: refused before any work
        _try(lambda: softmax(np.ones((1000, 1000))), lambda got: True),  # more work than a call may ask
        _try(lambda: softmax(np.ones(3)), lambda got: True),  # the reference refuses a vector
        _try(lambda: softmax(S, axis=0), lambda got: True),  # a keyword the reference does not take
        _try(lambda: softmax([[1.0, 2.0], [3.0, 5.0]]), lambda got: np.allclose(got, want)),  # lists travel too
    ]
    for _ in range(300):  # past the requests one call may make
        last = _try(lambda: softmax(S), lambda got: np.allclose(got, want))
    codes.append(last)
    return np.array([codes])


def forge_request(k):
    """One forged helper request, written where the runner's proxy would write it."""
    frame = sys._getframe(1)
    token, out_fd, call_id = frame.f_locals["token"], frame.f_locals["out_fd"], frame.f_locals["call_id"]
    forged = [
        {"helper": "project", "args": [], "kwargs": {}},  # a helper this call did not offer
        {"helper": "softmax", "args": [{"kind": "matrix", "shape": [10**6, 10**6], "offset": 0}], "kwargs": {}},
        {"helper": "softmax", "args": [{"kind": "matrix", "shape": [2, 2], "offset": 10**9}], "kwargs": {}},
        {"helper": "softmax", "args": {"not": "a list"}, "kwargs": {}},
        {"helper": "softmax", "args": [{"kind": "code", "value": "import os"}], "kwargs": {}},
        {"helper": "causal_mask", "args": [{"kind": "scalar", "value": 10**30}], "kwargs": {}},
        {"helper": "softmax", "args": [], "kwargs": {"x" * 300: {"kind": "scalar", "value": 1}}},
        {"helper": ["softmax"], "args": [], "kwargs": {}},
    ][k]
    header = json.dumps({"id": call_id, **forged}).encode()
    os.write(out_fd, struct.pack("<16sIQ", token, len(header), 0) + header)
    import time

    time.sleep(5)  # the grader ends this child: a forged request ends the call
