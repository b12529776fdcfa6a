"""A memory cgroup per submission, so that memory is bounded for its whole process tree.

RLIMIT_AS bounds one process's address space, not what a tree of them holds: shared memory, ``memfd``
files and a tmpfs ``/tmp`` live outside every address space. A memory cgroup counts all of them (the
kernel charges a page of tmpfs or shared memory to the group of the process that first touched it),
and when the group is full the kernel's OOM killer picks inside that group only: a memory bomb kills
itself, never the grader or the warm server.

Both hierarchies are supported: cgroup v1's memory controller (``/sys/fs/cgroup/memory``) and cgroup
v2 (``/sys/fs/cgroup``). The grader makes one folder of its own under the group it already runs in
(``mha-grader-PID``) and one group per submission below it. That needs write access there: root, or a
delegated v2 subtree whose ``cgroup.subtree_control`` already offers ``memory``. Where neither holds,
``available()`` says why and the sandbox's rlimits are the bound (docs/isolation.md).

Everything here takes its root folder as an argument, so that the files it writes can be checked on
a temp dir.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

V1_ROOT = Path("/sys/fs/cgroup/memory")
V2_ROOT = Path("/sys/fs/cgroup")


class CgroupUnavailable(RuntimeError):
    """No memory cgroup can be made here; ``str()`` says why."""


@dataclass(frozen=True)
class Hierarchy:
    version: int  # 1 or 2
    own: Path  # the memory group the grader runs in


def own_group(proc_cgroup: str, version: int) -> str:
    """The grader's group in ``/proc/self/cgroup``'s text: v1's ``memory`` line, or v2's ``0::`` line."""
    for line in proc_cgroup.splitlines():
        number, controllers, path = line.split(":", 2)
        if version == 2 and number == "0" and controllers == "":
            return path
        if version == 1 and "memory" in controllers.split(","):
            return path
    raise CgroupUnavailable(f"this process is in no cgroup v{version} memory group")


def find(v1_root: Path = V1_ROOT, v2_root: Path = V2_ROOT, proc_cgroup: str | None = None) -> Hierarchy:
    """The memory hierarchy of this machine and the grader's own group in it."""
    if proc_cgroup is None:
        proc_cgroup = Path("/proc/self/cgroup").read_text()
    if (v1_root / "memory.limit_in_bytes").exists():
        return Hierarchy(1, v1_root / own_group(proc_cgroup, 1).lstrip("/"))
    if (v2_root / "cgroup.controllers").exists():
        return Hierarchy(2, v2_root / own_group(proc_cgroup, 2).lstrip("/"))
    raise CgroupUnavailable(f"no cgroup memory controller at {v1_root} or {v2_root}")


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


class MemoryGroups:
    """The grader's folder of groups and one group per submission (``make``, ``join``, ``release``)."""

    def __init__(self, hierarchy: Hierarchy, limit_bytes: int):
        self.hierarchy = hierarchy
        self.limit_bytes = limit_bytes
        self.base = hierarchy.own / f"mha-grader-{os.getpid()}"
        self._numbers = itertools.count()
        self._lock = threading.Lock()
        try:
            if hierarchy.version == 2:
                _enable_memory(hierarchy.own)
            self.base.mkdir()
            if hierarchy.version == 2:
                _write(self.base / "cgroup.subtree_control", "+memory")
        except OSError as exc:
            raise CgroupUnavailable(f"cannot make a memory group under {hierarchy.own}: {exc.strerror}") from None

    def make(self) -> Path:
        """A new group for one submission, its limits written; nothing in it yet."""
        with self._lock:
            group = self.base / f"s{next(self._numbers)}"
        group.mkdir()
        limit = str(self.limit_bytes)
        if self.hierarchy.version == 1:
            _write(group / "memory.limit_in_bytes", limit)
            if (group / "memory.memsw.limit_in_bytes").exists():  # memory + swap, written after memory alone
                _write(group / "memory.memsw.limit_in_bytes", limit)
            if (group / "memory.swappiness").exists():
                _write(group / "memory.swappiness", "0")
        else:
            _write(group / "memory.max", limit)
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if (group / name).exists():
                    _write(group / name, value)
        return group

    @staticmethod
    def join(group: Path, pid: int) -> None:
        _write(group / "cgroup.procs", str(pid))

    @staticmethod
    def members(group: Path) -> list[int]:
        try:
            return [int(line) for line in (group / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def release(self, group: Path, timeout: float = 10.0) -> None:
        """Kill whatever is left in ``group`` and remove it (a group with a process in it cannot go)."""
        deadline = time.monotonic() + timeout
        while True:
            if (group / "cgroup.kill").exists():
                try:
                    _write(group / "cgroup.kill", "1")
                except OSError:
                    pass
            for pid in self.members(group):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                group.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.02)

    def oom_killed(self, group: Path) -> bool:
        """Whether the kernel killed a process of ``group`` for want of memory (read before ``release``)."""
        name = "memory.oom_control" if self.hierarchy.version == 1 else "memory.events"
        try:
            fields = dict(line.split() for line in (group / name).read_text().splitlines() if " " in line)
        except (OSError, ValueError):
            return False
        return int(fields.get("oom_kill", 0)) > 0

    def close(self) -> None:
        for group in sorted(self.base.glob("s*")):
            self.release(group)
        try:
            self.base.rmdir()
        except OSError:
            pass


def _enable_memory(own: Path) -> None:
    """cgroup v2 hands a controller to child groups only when their parent lists it in subtree_control."""
    if "memory" in (own / "cgroup.subtree_control").read_text().split():
        return
    _write(own / "cgroup.subtree_control", "+memory")


def available(limit_bytes: int) -> tuple[MemoryGroups | None, str]:
    """The submissions' memory groups, or None and why none can be had (one line)."""
    try:
        return MemoryGroups(find(), limit_bytes), ""
    except (CgroupUnavailable, OSError) as exc:
        return None, str(exc)
