"""Hostile: shrinks the grader's file-size limit to 1 byte (prlimit on the parent and on the marked
grader), so that it cannot write the gradebook. Implements nothing: expected 0."""
import os
import resource

for pid in {os.getppid()} | {int(e) for e in (os.listdir("/proc") if os.path.isdir("/proc") else []) if e.isdigit()}:
    try:
        if pid > 1 and MARK.encode() in open(f"/proc/{pid}/environ", "rb").read():
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (1, 1))
    except OSError:
        pass
