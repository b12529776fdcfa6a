"""Hostile: shrinks every pipe it holds to one page and never reads another request, while its import
returns; every call then blocks forever. Implements project only (expected 3: project's points)."""
import fcntl
import time

for fd in range(3, 64):
    try:
        fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ
    except OSError:
        pass


def project(X, W):
    return X @ W


def softmax(S):
    time.sleep(3600)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    time.sleep(3600)
