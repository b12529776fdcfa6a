"""Hostile: each call finds the child runner's token, answer pipe and call id in its caller's frame and
answers first with a forged frame: shape [2**19] * 4 with no data, whose element count overflows a 64-bit
product to 0, so that a size check done in int64 passes and the reshape fails in the grader. Its project
is right, but the forged answer comes first: expected 0."""
import json
import os
import struct
import sys


def project(X, W):
    caller = sys._getframe().f_back
    token, out_fd, call_id = caller.f_locals["token"], caller.f_locals["out_fd"], caller.f_locals["call_id"]
    header = json.dumps({"id": call_id, "ok": True, "shape": [2**19] * 4, "dtype": "float64"}).encode()
    os.write(out_fd, struct.pack("<16sIQ", token, len(header), 0) + header)
    return X @ W
