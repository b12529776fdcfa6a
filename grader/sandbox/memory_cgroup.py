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

How much each group may hold is what the grader can give ``jobs`` submissions at once, never more in
total than there is (``room``, ``Share``): the least of the machine's available memory and, for the
grader's own group and every group above it, its limit less what it already holds (the grader and the
warm server included), less a reserve for the grader itself. Where that is too little for ``jobs``
submissions of a working size each, fewer run at once (``MemoryGroups.make`` waits for a slot).

Everything here takes its root folder as an argument, so that the files it writes can be checked on
a temp dir, and the arithmetic reads the kernel's files as text (pure functions).
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
MEMINFO = Path("/proc/meminfo")
MIB = 1 << 20
# What the grader itself may still grow by while it grades (its peak stays under 512 MiB; the server's
# memory is already counted in what its group holds when the share is made).
GRADER_RESERVE = 256 * MIB
# v1 writes "no limit" as the largest page-aligned signed 64-bit number; anything from 2**60 up is no limit.
_V1_UNLIMITED = 1 << 60
# The longest a submission waits for another's group to go: far more than any submission's budget
# (Limits.MAX_SECONDS) takes, so only a group the grader failed to release ends in an error.
SLOT_WAIT = 1800.0


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


def limit_bytes(text: str) -> int | None:
    """A group's limit as the kernel writes it (v1 ``memory.limit_in_bytes``, v2 ``memory.max``); None: no limit."""
    text = text.strip()
    if text == "max":
        return None
    value = int(text)
    return None if value >= _V1_UNLIMITED else value


def stat_field(stat_text: str, name: str) -> int:
    """One field of a ``memory.stat`` (flat ``name value`` lines, in any order); 0 when absent."""
    for line in stat_text.splitlines():
        key, _, value = line.partition(" ")
        if key == name:
            return int(value)
    return 0


def held(usage: int, stat_text: str, version: int) -> int:
    """What a group holds that the kernel cannot simply drop: its usage less the inactive file cache (what
    a container runtime calls the working set). v1's ``total_`` fields count the groups below it too."""
    inactive = stat_field(stat_text, "total_inactive_file" if version == 1 else "inactive_file")
    return max(usage - inactive, 0)


def mem_available(meminfo_text: str) -> int:
    """``MemAvailable`` of ``/proc/meminfo``, in bytes: what the machine can still give without swapping."""
    for line in meminfo_text.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise CgroupUnavailable("/proc/meminfo has no MemAvailable line")


def group_room(group: Path, version: int) -> int | None:
    """A group's limit less what it holds; None when it has no limit (or no such files: v2's root)."""
    names = (("memory.limit_in_bytes", "memory.usage_in_bytes") if version == 1
             else ("memory.max", "memory.current"))
    try:
        limit = limit_bytes((group / names[0]).read_text())
        if limit is None:
            return None
        usage = int((group / names[1]).read_text())
        stat = (group / "memory.stat").read_text()
    except FileNotFoundError:
        return None
    return limit - held(usage, stat, version)


def room(hierarchy: Hierarchy, meminfo_text: str | None = None) -> int:
    """Bytes the grader may give its submissions in all: the least of the machine's available memory and
    the room of its own group and of every group above it, less the grader's reserve."""
    if meminfo_text is None:
        meminfo_text = MEMINFO.read_text()
    rooms = [mem_available(meminfo_text)]
    for group in (hierarchy.own, *hierarchy.own.parents):  # the hierarchy's root and the folders above have no limit
        found = group_room(group, hierarchy.version)
        if found is not None:
            rooms.append(found)
    return max(min(rooms) - GRADER_RESERVE, 0)


@dataclass(frozen=True)
class Share:
    """How the room is shared: ``at_once`` submissions, each in a group of ``each`` bytes (at_once x each <=
    the room, unless the room is below even one group's ``floor``)."""

    each: int
    at_once: int

    @classmethod
    def of(cls, room_bytes: int, jobs: int, cap: int, floor: int) -> Share:
        """``jobs`` submissions at once when each can have ``floor`` bytes (what a correct one needs), else as
        many as can; each gets an equal part of the room, at most ``cap``. With less than ``floor`` in all,
        one at a time in whatever there is (never under 64 MiB: a group must hold the interpreter)."""
        at_once = max(1, min(jobs, room_bytes // floor))
        return cls(max(min(cap, room_bytes // at_once), 64 * MIB), at_once)


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


_FOLDERS = itertools.count()  # this process's folders of groups, numbered


class MemoryGroups:
    """The grader's folder of groups and one group per submission (``make``, ``join``, ``release``), at most
    ``share.at_once`` of them at a time."""

    def __init__(self, hierarchy: Hierarchy, share: Share):
        self.hierarchy = hierarchy
        self.share = share
        self.limit_bytes = share.each
        # One folder per MemoryGroups, not per process: two launchers alive at once (a test session's shared server
        # and a sandbox of its own) must not find each other's folder and go without groups.
        self.base = hierarchy.own / f"mha-grader-{os.getpid()}-{next(_FOLDERS)}"
        self._numbers = itertools.count()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(share.at_once)
        self._held: dict[Path, tuple[threading.Thread, bool]] = {}  # group -> (who made it, whether it took a slot)
        try:
            if hierarchy.version == 2:
                _enable_memory(hierarchy.own)
            self.base.mkdir()
            if hierarchy.version == 2:
                _write(self.base / "cgroup.subtree_control", "+memory")
        except OSError as exc:
            raise CgroupUnavailable(f"cannot make a memory group under {hierarchy.own}: {exc.strerror}") from None

    def make(self) -> Path:
        """A new group for one submission, its limits written; nothing in it yet. Waits while ``at_once``
        groups are in use: the room holds no more. A thread that already holds a group does not wait (it
        would wait for itself)."""
        thread = threading.current_thread()  # not its ident: a finished thread's ident is handed out again
        with self._lock:
            nested = any(holder is thread for holder, _ in self._held.values())
        if not nested and not self._slots.acquire(timeout=SLOT_WAIT):
            raise CgroupUnavailable(f"no memory group was released in {SLOT_WAIT:.0f} s")
        with self._lock:
            group = self.base / f"s{next(self._numbers)}"
            self._held[group] = (thread, not nested)
        try:
            group.mkdir()
            self._limit(group)
        except BaseException:
            self.release(group)
            raise
        return group

    def reshare(self, share: Share) -> None:
        """Share the room anew (a regrade alone gets it all); only while no group is in use."""
        with self._lock:
            if self._held:
                raise RuntimeError(f"{len(self._held)} memory groups are still in use: the room cannot be shared anew")
            self.share, self.limit_bytes = share, share.each
            self._slots = threading.BoundedSemaphore(share.at_once)

    def _free(self, group: Path) -> None:
        """Give the group's slot back, once."""
        with self._lock:
            if group not in self._held:
                return
            _, took_slot = self._held.pop(group)
        if took_slot:
            self._slots.release()

    def _limit(self, group: Path) -> None:
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
        try:
            self._remove(group, timeout)
        finally:
            self._free(group)

    def _remove(self, group: Path, timeout: float) -> None:
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


def available(jobs: int, cap: int, floor: int) -> tuple[MemoryGroups | None, str]:
    """The submissions' memory groups, shared among ``jobs`` at once, or None and why none can be had."""
    try:
        hierarchy = find()
        return MemoryGroups(hierarchy, Share.of(room(hierarchy), jobs, cap, floor)), ""
    except (CgroupUnavailable, OSError, ValueError) as exc:
        return None, str(exc)
