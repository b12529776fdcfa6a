"""Every limit a submission runs under, and the one range its time limits may take."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

GIB = 1024**3
# The exit code a child's end reports when the kernel killed its tree for want of memory (its memory
# cgroup was full): no exit code or signal is this number, so it can only mean that.
MEMORY_KILLED = -1000


@dataclass(frozen=True)
class Limits:
    """Every limit a submission runs under; the CLI's --timeout sets ``call_timeout``."""

    call_timeout: float = 3.0  # seconds of wall time per call
    import_timeout: float = 30.0  # seconds to start the child and import the submission
    # The budget of one submission: wall time for everything (the import and all calls, restarts
    # included); no process of it gets more CPU time than that either. docs/instructors.md: "Budgets".
    submission_seconds: float = 60.0
    memory_bytes: int = 2 * GIB  # address space per process; importing torch peaks near 0.65 GiB (measured)
    # The most that everything the tree holds (processes, shared memory, memfd, its /tmp) may come to, where
    # a memory cgroup can be had (memory_cgroup.py); the kernel's OOM killer then picks inside the
    # submission only. Less where the machine cannot give that to --jobs submissions at once (Share).
    tree_memory_bytes: int = 2 * GIB
    processes: int = 4  # processes and threads of the submission (so memory is at most 4 x memory_bytes)
    # CPU time per process, a backstop for busy threads: the budget in whole seconds (at least one), derived when
    # the Limits are made (None); ``dataclasses.replace`` keeps it, so the budget the reading shortened
    # (grade._graded) leaves it as the whole budget set it. Make Limits with the budget, not a replace of
    # ``Limits()``, to have it follow.
    cpu_seconds: int | None = None
    file_bytes: int = 16 * 1024**2  # the largest file the child may write
    tmp_bytes: int = 64 * 1024**2  # the submission's private /tmp (namespaces mode)
    output_bytes: int = 64 * 1024  # stdout and stderr kept (each); the rest is read and dropped
    max_entries: int = 1_000_000  # the largest result accepted (8 MB of float64)
    max_restarts: int = 6  # fresh children after timeouts/crashes, per submission

    # The time limits and their one range, (0, MAX_SECONDS]: the command line's options, their help and their
    # error message read both from here.
    TIME_LIMITS: ClassVar[tuple[str, ...]] = ("call_timeout", "import_timeout", "submission_seconds")
    MAX_SECONDS: ClassVar[float] = 600.0

    @classmethod
    def seconds_allowed(cls, value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= cls.MAX_SECONDS

    def __post_init__(self):
        for name in self.TIME_LIMITS:
            value = getattr(self, name)
            if not self.seconds_allowed(value):
                raise ValueError(f"{name} must be a number of seconds in (0, {self.MAX_SECONDS:g}], got {value!r}")
        if self.cpu_seconds is None:
            object.__setattr__(self, "cpu_seconds", max(1, round(self.submission_seconds)))
