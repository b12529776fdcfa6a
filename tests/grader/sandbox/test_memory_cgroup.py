"""The memory cgroup module's paths, files and arithmetic, on temp dirs laid out like cgroup v1 and v2 with
files in the kernel's own formats; and, as root on a cgroup v1 machine, a real batch in a small memory
group the test makes: a memory bomb beside correct torch neighbours costs them nothing."""

import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from grader.sandbox import isolation, memory_cgroup

from ..conftest import SUBMISSIONS, needs_system, skip_or_fail

V1_LINES = "4:memory:/process_api/abc\n1:cpu:/\n0::/\n"
V2_LINES = "0::/user.slice/user-1000.slice/session-2.scope\n"
ONE = memory_cgroup.Share(1 << 30, 1)
MIB = 1 << 20
# The kernel's formats, taken from a real machine (v1) and the cgroup v2 documentation's field list (v2).
V1_STAT = ("cache 263487488\nrss 127426560\nshmem 0\ninactive_file 111579136\nactive_file 151908352\n"
           "hierarchical_memory_limit {limit}\ntotal_cache {cache}\ntotal_rss 127426560\n"
           "total_inactive_file {inactive}\ntotal_active_file 151908352\n")
V2_STAT = ("anon {anon}\nfile {file}\nkernel 9437184\nshmem 0\nfile_mapped 0\ninactive_anon {anon}\n"
           "active_anon 0\ninactive_file {inactive}\nactive_file 0\nunevictable 0\n")
MEMINFO = "MemTotal:       24683656 kB\nMemFree:        19997000 kB\nMemAvailable:   {kb} kB\nBuffers: 0 kB\n"
V1_UNLIMITED = "9223372036854771712"


def v2_tree(tmp_path: Path, offered: str = "memory pids") -> Path:
    own = tmp_path / "v2" / "user.slice" / "user-1000.slice" / "session-2.scope"
    own.mkdir(parents=True)
    (tmp_path / "v2" / "cgroup.controllers").write_text("cpu memory pids\n")
    (own / "cgroup.subtree_control").write_text(offered + "\n")
    return own


def test_the_grader_finds_its_own_group_in_either_hierarchy(tmp_path):
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "memory.limit_in_bytes").write_text("max\n")
    found = memory_cgroup.find(tmp_path / "v1", tmp_path / "v2", V1_LINES)
    assert found == memory_cgroup.Hierarchy(1, tmp_path / "v1" / "process_api" / "abc")
    (tmp_path / "v1" / "memory.limit_in_bytes").unlink()
    own = v2_tree(tmp_path)
    assert memory_cgroup.find(tmp_path / "v1", tmp_path / "v2", V2_LINES) == memory_cgroup.Hierarchy(2, own)
    with pytest.raises(memory_cgroup.CgroupUnavailable):
        memory_cgroup.find(tmp_path / "none", tmp_path / "none2", V2_LINES)


def test_v2_groups_get_memory_max_no_swap_and_the_whole_group_killed_on_oom(tmp_path):
    own = v2_tree(tmp_path)
    groups = memory_cgroup.MemoryGroups(memory_cgroup.Hierarchy(2, own), memory_cgroup.Share(123456, 2))
    assert groups.base.parent == own and groups.base.name.startswith(f"mha-grader-{os.getpid()}-")
    assert (groups.base / "cgroup.subtree_control").read_text() == "+memory"
    group = groups.make()
    assert group.parent == groups.base and (group / "memory.max").read_text() == "123456"
    groups.join(group, 4242)
    assert (group / "cgroup.procs").read_text() == "4242"
    (group / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert groups.oom_killed(group)


def test_v2_without_memory_offered_asks_for_it_and_says_why_when_refused(tmp_path):
    own = v2_tree(tmp_path, offered="pids")
    memory_cgroup.MemoryGroups(memory_cgroup.Hierarchy(2, own), ONE)
    assert (own / "cgroup.subtree_control").read_text() == "+memory"  # asked for it
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    with pytest.raises(memory_cgroup.CgroupUnavailable, match="cannot make a memory group"):
        memory_cgroup.MemoryGroups(memory_cgroup.Hierarchy(2, blocked), ONE)  # not a folder: nothing goes under it


def test_v1_groups_limit_memory_and_swap_together(tmp_path):
    own = tmp_path / "v1" / "process_api" / "abc"
    own.mkdir(parents=True)
    groups = memory_cgroup.MemoryGroups(memory_cgroup.Hierarchy(1, own), memory_cgroup.Share(2 << 30, 1))
    group = groups.make()
    assert (group / "memory.limit_in_bytes").read_text() == str(2 << 30)
    (group / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    assert not groups.oom_killed(group)


def v1_group(path: Path, limit: str, usage: int, inactive: int) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "memory.limit_in_bytes").write_text(limit + "\n")
    (path / "memory.usage_in_bytes").write_text(f"{usage}\n")
    (path / "memory.stat").write_text(V1_STAT.format(limit=limit, cache=inactive, inactive=inactive))
    return path


def v2_group(path: Path, limit: str, usage: int, inactive: int) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "memory.max").write_text(limit + "\n")
    (path / "memory.current").write_text(f"{usage}\n")
    (path / "memory.stat").write_text(V2_STAT.format(anon=usage - inactive, file=inactive, inactive=inactive))
    return path


def test_limits_read_as_the_kernel_writes_them():
    assert memory_cgroup.limit_bytes("max\n") is None  # v2: no limit
    assert memory_cgroup.limit_bytes(V1_UNLIMITED + "\n") is None  # v1: no limit
    assert memory_cgroup.limit_bytes("1073741824\n") == 1 << 30
    assert memory_cgroup.held(500 * MIB, V1_STAT.format(limit=0, cache=0, inactive=200 * MIB), 1) == 300 * MIB
    assert memory_cgroup.held(500 * MIB, V2_STAT.format(anon=1, file=2, inactive=100 * MIB), 2) == 400 * MIB
    assert memory_cgroup.mem_available(MEMINFO.format(kb=1024)) == 1 << 20


@pytest.mark.parametrize("version, make", [(1, v1_group), (2, v2_group)])
def test_the_room_is_the_least_any_group_above_or_the_machine_has_less_the_graders_reserve(tmp_path, version, make):
    """The grader's group holds 300 MiB (and 200 MiB of inactive cache, which does not count) of its 1 GiB; the
    group above it has 3 GiB with 2.5 GiB held; the machine has 8 GiB available."""
    top = make(tmp_path / "root" / "batch", "max" if version == 2 else V1_UNLIMITED, 0, 0)
    parent = make(top / "course", str(3 << 30), 2560 * MIB, 0)
    own = make(parent / "grader", str(1 << 30), 500 * MIB, 200 * MIB)
    hierarchy = memory_cgroup.Hierarchy(version, own)
    room = memory_cgroup.room(hierarchy, MEMINFO.format(kb=8 << 20))
    assert room == 512 * MIB - memory_cgroup.GRADER_RESERVE  # the group above: 3 GiB - 2.5 GiB
    (parent / ("memory.max" if version == 2 else "memory.limit_in_bytes")).write_text("max\n")
    assert memory_cgroup.room(hierarchy, MEMINFO.format(kb=8 << 20)) == 724 * MIB - memory_cgroup.GRADER_RESERVE
    assert memory_cgroup.room(hierarchy, MEMINFO.format(kb=100 << 10)) == 0  # the machine has less: never below 0


def test_the_room_is_shared_among_jobs_never_more_in_total_and_fewer_at_once_when_too_small():
    share = memory_cgroup.Share.of
    assert share(16 << 30, 4, cap=2 << 30, floor=128 * MIB) == memory_cgroup.Share(2 << 30, 4)  # the cap
    assert share(1 << 30, 4, cap=2 << 30, floor=128 * MIB) == memory_cgroup.Share(256 * MIB, 4)  # 4 x 256 MiB
    assert share(300 * MIB, 4, cap=2 << 30, floor=128 * MIB) == memory_cgroup.Share(150 * MIB, 2)  # two fit
    assert share(100 * MIB, 4, cap=2 << 30, floor=128 * MIB) == memory_cgroup.Share(100 * MIB, 1)  # one, all there is
    for room in (0, 64 * MIB, 700 * MIB, 5 << 30):
        for jobs in (1, 2, 3, 8):
            got = share(room, jobs, cap=2 << 30, floor=128 * MIB)
            assert 1 <= got.at_once <= jobs and (got.each * got.at_once <= room or got.each == 64 * MIB)


def empty(group: Path) -> None:
    """A temp dir is not a cgroup: its files must go before rmdir can."""
    for name in group.iterdir():
        name.unlink()


def test_no_more_groups_than_the_share_at_once_and_a_released_slot_is_taken(tmp_path):
    own = tmp_path / "v1" / "own"
    own.mkdir(parents=True)
    groups = memory_cgroup.MemoryGroups(memory_cgroup.Hierarchy(1, own), memory_cgroup.Share(64 * MIB, 2))
    first = groups.make()
    second = threading.Thread(target=lambda: made.append(groups.make()))
    made = []
    second.start()
    second.join(5)
    second, nested = made.pop(), groups.make()  # this thread holds one: it does not wait for itself
    empty(nested)
    groups.release(nested)
    waiter = threading.Thread(target=lambda: made.append(groups.make()))
    waiter.start()
    waiter.join(0.5)
    assert made == [], "a third group was made while two were in use"
    empty(first)
    groups.release(first)
    waiter.join(5)
    assert len(made) == 1 and made[0] not in (first, second)
    with pytest.raises(RuntimeError, match="still in use"):
        groups.reshare(memory_cgroup.Share(128 * MIB, 1))


# Memory outside every address space: memfd files of 15 MiB (under the file-size limit), 3 GiB in all, held.
# No rlimit bounds it; only the submission's memory group does. A fresh interpreter fills first: its own
# pages are few, so where the kernel must choose among everyone's processes it picks the biggest, the torch
# neighbours, long before it. Then the submission's own process fills, so that its end is a memory kill.
MEMFD_BOMB = """
import os, subprocess, sys, time

FILL = '''
import os, time
files = []
for i in range(200):
    files.append(os.memfd_create("bomb"))
    for _ in range(15):
        os.write(files[-1], bytes(1 << 20))
time.sleep(60)
'''
time.sleep(1)  # the neighbours are being graded when it fills
subprocess.run([sys.executable, "-I", "-S", "-c", FILL])
exec(FILL)
"""


@pytest.fixture
def small_memory_group():
    """A cgroup v1 memory group of 1 GiB that this test makes under its own group and removes: the grader
    runs in it, as on a machine of 1 GiB."""
    if os.geteuid() != 0 or not (memory_cgroup.V1_ROOT / "memory.limit_in_bytes").exists():
        skip_or_fail("needs root and a cgroup v1 memory hierarchy (the v2 arithmetic is tested above)")
    own = memory_cgroup.find().own
    group = own / f"mha-test-{os.getpid()}"
    group.mkdir()
    try:
        (group / "memory.limit_in_bytes").write_text(str(1 << 30))
        if (group / "memory.memsw.limit_in_bytes").exists():
            (group / "memory.memsw.limit_in_bytes").write_text(str(1 << 30))
        yield group
    finally:
        deadline = time.monotonic() + 10
        while group.exists():
            try:
                group.rmdir()
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@pytest.mark.parametrize("mode", ["namespaces", "trusted"])
def test_a_memory_bomb_beside_torch_neighbours_in_a_small_group_costs_them_nothing(tmp_path, small_memory_group,
                                                                                   mode):
    """Each submission's group is a share of what the grader's 1 GiB group has left, never more in all: the
    bomb fills its own and is killed there, reported as a memory kill; the neighbours keep full marks. In the
    namespaces mode the bomb (graded first) has a neighbour beside it and is graded again alone (the kill
    stands); 1 GiB cannot hold three interpreters that import torch, so the trusted mode runs fewer at once
    and the summary says so. (With 2 GiB for each, as before, the trusted mode's neighbours got 0.)"""
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("alice", "bob"):
        (folder / f"{name}.py").write_text((SUBMISSIONS / "correct_torch.py").read_text())
    (folder / "a_bomb.py").write_text(MEMFD_BOMB)
    command = [sys.executable, "-m", "grader", str(folder), "--csv", str(tmp_path / "grades.csv"), "--jobs", "3",
               "--seed", "1", "--lang", "en", "--isolation", mode]
    join = f"echo $$ > {shlex.quote(str(small_memory_group / 'cgroup.procs'))} && exec {shlex.join(command)}"
    proc = subprocess.run(["sh", "-c", join], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    book = pd.read_csv(tmp_path / "grades.csv", keep_default_na=False).set_index("student")
    assert book.loc["alice", "total"] == 30 and book.loc["bob", "total"] == 30, proc.stdout
    assert book.loc["a_bomb", "total"] == 0
    told = json.loads((tmp_path / "grades_results" / "a_bomb.json").read_text())["output"]
    assert "memory limit" in told and "exit code" not in told, told
    again = re.search(r"graded again alone \(that grade counts\): (.*)", proc.stdout)
    if mode == "namespaces":
        assert again and "a_bomb" in again[1].split(", "), proc.stdout
    else:
        assert re.search(r"could give only [12] of the 3 jobs", proc.stdout), proc.stdout


@needs_system(isolation.namespaces_problem(), "needs namespaces (bubblewrap)")
def test_a_submission_killed_by_sigkill_is_told_so_not_given_an_exit_code(run_grader, tmp_path):
    """The reaper passes the student's signal on; SIGKILL has no handler to reset, and trying made it exit 70."""
    student = tmp_path / "student.py"
    student.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    proc = run_grader(student, "--json", tmp_path / "results.json", "--lang", "en")
    told = json.loads((tmp_path / "results.json").read_text())["output"]
    assert proc.returncode == 1 and "killed by signal SIGKILL" in told, told
