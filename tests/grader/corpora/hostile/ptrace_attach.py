"""Hostile: attaches to the grader with ptrace (PTRACE_ATTACH, then kill it while stopped).
Implements nothing: expected 0."""
import ctypes
import os
import signal

libc = ctypes.CDLL(None, use_errno=True)
targets = {os.getppid()}
if os.path.isdir("/proc"):
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and MARK.encode() in open(f"/proc/{entry}/environ", "rb").read():
                targets.add(int(entry))
        except OSError:
            pass
for pid in targets:
    if pid > 1 and libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
        os.kill(pid, signal.SIGKILL)
