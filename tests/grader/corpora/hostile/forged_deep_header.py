"""Hostile: finds the child runner's token and answer pipe in its caller's frame and, on import, writes a
frame with the right token whose JSON header is nested 5,000 deep, which Python's json parser cannot
read without recursing past its limit. Its project is right, but every import forges the frame again,
so no call is ever answered: expected 0."""
import os
import struct
import sys

frame = sys._getframe()
while frame is not None and frame.f_code.co_name != "serve_submission":
    frame = frame.f_back
token, out_fd = frame.f_locals["token"], frame.f_locals["out_fd"]
header = b"[" * 5000 + b"]" * 5000
os.write(out_fd, struct.pack("<16sIQ", token, len(header), 0) + header)


def project(X, W):
    return X @ W
