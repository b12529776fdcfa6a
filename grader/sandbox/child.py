"""What a launcher hands a session: one running submission (``Child``), how its end is reported, and the
launcher's own failure (``LaunchError``). A leaf below ``launch.py`` (the launchers, and ``Launcher``, what a session
asks of one) and ``memory_placement.py``.

A ``Child`` is four pipe ends (requests in, answers, stdout, stderr, all the grader's side) and ``stop_tree``,
which kills its whole process tree and says how it ended (``exit_code``). ``rlimits`` is the per-process part of
``Limits`` that every launcher puts on a child. ``LaunchError`` is the grader's failure to start a child, never the
student's.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass

from grader.sandbox.limits import MEMORY_KILLED, Limits

# Kills a child's whole process tree after letting it exit on its own for ``grace`` seconds, and returns its exit
# code: negative, killed by that signal; MEMORY_KILLED, by the kernel for want of memory; None, not known.
StopTree = Callable[[float], int | None]


class LaunchError(RuntimeError):
    """The grader could not start a submission's process: the grader's fault, never the student's."""


@dataclass(frozen=True)
class Child:
    """One running submission: where to write requests, where answers and output come from."""

    req_w: int
    resp_r: int
    stdout: int
    stderr: int
    stop_tree: StopTree

    def end(self, grace: float = 0.0) -> int | None:
        """Kill the whole process tree, close our pipe ends and return its exit code. ``grace``: seconds
        to let it exit on its own first (it closed its pipe: a crash whose signal we want to report)."""
        try:
            code = self.stop_tree(grace)
        finally:
            for fd in (self.req_w, self.resp_r, self.stdout, self.stderr):
                try:
                    os.close(fd)
                except OSError:
                    pass
        return code


def exit_code(code: int | None, memory_killed: bool) -> int | None:
    """The code Child.end reports: MEMORY_KILLED when the kernel's OOM killer ended the tree (SIGKILL)."""
    return MEMORY_KILLED if memory_killed and code in (-signal.SIGKILL, None) else code


def rlimits(limits: Limits) -> dict[str, int]:
    """The per-process resource limits of a submission (names as in the ``resource`` module)."""
    return {
        "RLIMIT_AS": limits.memory_bytes,
        "RLIMIT_CPU": limits.cpu_seconds,
        "RLIMIT_FSIZE": limits.file_bytes,
        "RLIMIT_CORE": 0,
        "RLIMIT_NPROC": limits.processes,
        "RLIMIT_NOFILE": 256,
    }
