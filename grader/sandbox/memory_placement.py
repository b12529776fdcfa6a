"""Where a submission's processes are counted and how the kernel ranks them under memory pressure: a
launcher's use of ``memory_cgroup`` (the groups themselves, and the room they share, live there).

Each launcher has one ``Placement``; it places every child it starts before the submission's code arrives, and
releases the child's group when the child ends, learning whether the kernel killed it for want of memory.
"""

from __future__ import annotations

import threading
from pathlib import Path

from grader.sandbox import memory_cgroup
from grader.sandbox.child import LaunchError
from grader.sandbox.limits import Limits


class Placement:
    """Where a submission's processes are counted (a memory cgroup of its own, when one can be had) and
    how the kernel ranks them under memory pressure (oom_score_adj 1000: first to go). Written from the
    grader, before the submission's code arrives: as root the kernel then refuses to let the submission
    lower its score again.

    ``jobs`` submissions share the room the machine (or the grader's own cgroup) has
    (``memory_cgroup.Share``); ``floor`` is what a correct submission needs under this launcher."""

    def __init__(self, jobs: int = 1, floor: int = 0, overhead: int = 0):
        self._lock = threading.Lock()
        self.overhead = overhead  # what the launcher itself will hold beside the grader (the warm server)
        self._groups: memory_cgroup.MemoryGroups | None = None
        self.why_no_cgroup: str | None = None  # None until the first submission asks
        self.jobs, self.floor = jobs, floor
        self._cap = 0  # the most one submission may have (Limits.tree_memory_bytes), known at the first

    def _memory_groups(self, cap: int) -> memory_cgroup.MemoryGroups | None:
        with self._lock:
            if self.why_no_cgroup is None:
                self._cap = cap
                self._groups, self.why_no_cgroup = memory_cgroup.available(self.jobs, cap, max(self.floor, 1))
            return self._groups

    def plan(self) -> int:
        """How many of the ``jobs`` submissions the memory is expected to hold at once, estimated before any is
        placed; from now on the groups are shared among that many. A batch sizes its pool by it, so that none
        waits for memory on its own budget's clock; the share made at the first placement, measured then,
        may still be smaller."""
        with self._lock:
            if self._groups is not None:
                return self._groups.share.at_once
            try:
                room = memory_cgroup.room(memory_cgroup.find()) - self.overhead
            except (OSError, ValueError, memory_cgroup.CgroupUnavailable):
                return self.jobs
            self.jobs = memory_cgroup.Share.of(max(room, 0), self.jobs, cap=1, floor=max(self.floor, 1)).at_once
            return self.jobs

    @property
    def share(self) -> memory_cgroup.Share | None:
        """How the room is shared, once the first submission has been placed; None without cgroups."""
        return self._groups.share if self._groups is not None else None

    def alone(self) -> None:
        """From now on one submission at a time, with the whole room (a regrade alone). Where the room cannot be
        read again, or a group is still in use, the share stays as it was: smaller, never more than there is."""
        with self._lock:
            self.jobs = 1
            if self._groups is not None:
                try:
                    room = memory_cgroup.room(self._groups.hierarchy)
                    self._groups.reshare(memory_cgroup.Share.of(room, 1, self._cap, max(self.floor, 1)))
                except (OSError, ValueError, RuntimeError):
                    pass

    def place(self, pid: int, limits: Limits) -> Path | None:
        try:
            with open(f"/proc/{pid}/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            pass  # the child raises its own score too (inside/confinement.first_to_die)
        groups = self._memory_groups(limits.tree_memory_bytes)
        if groups is None:
            return None
        try:
            group = groups.make()
        except (OSError, memory_cgroup.CgroupUnavailable) as exc:
            raise LaunchError(f"could not make the submission's memory cgroup: {exc}") from exc
        try:
            groups.join(group, pid)
        except OSError as exc:
            groups.release(group)
            raise LaunchError(f"could not put the submission in its memory cgroup: {exc}") from exc
        return group

    def release(self, group: Path | None) -> bool:
        """Remove the group; whether the kernel killed one of its processes for want of memory."""
        if group is None or self._groups is None:
            return False
        killed = self._groups.oom_killed(group)
        self._groups.release(group)
        return killed

    def close(self) -> None:
        with self._lock:
            if self._groups is not None:
                self._groups.close()
