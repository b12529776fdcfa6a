"""The memory cgroup module's paths and files, on temp dirs laid out like cgroup v1 and v2 (the real v1
hierarchy is exercised by test_shared_nothing.py as root)."""

import os
from pathlib import Path

import pytest

from grader.sandbox import memory_cgroup

V1_LINES = "4:memory:/process_api/abc\n1:cpu:/\n0::/\n"
V2_LINES = "0::/user.slice/user-1000.slice/session-2.scope\n"


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
    groups = memory_cgroup.MemoryGroups(memory_cgroup.Hierarchy(2, own), 123456)
    assert groups.base == own / f"mha-grader-{os.getpid()}"
    assert (groups.base / "cgroup.subtree_control").read_text() == "+memory"
    group = groups.make()
    assert group.parent == groups.base and (group / "memory.max").read_text() == "123456"
    groups.join(group, 4242)
    assert (group / "cgroup.procs").read_text() == "4242"
    (group / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert groups.oom_killed(group)


def test_v2_without_memory_offered_asks_for_it_and_says_why_when_refused(tmp_path):
    own = v2_tree(tmp_path, offered="pids")
    memory_cgroup.MemoryGroups(memory_cgroup.Hierarchy(2, own), 1)
    assert (own / "cgroup.subtree_control").read_text() == "+memory"  # asked for it
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    with pytest.raises(memory_cgroup.CgroupUnavailable, match="cannot make a memory group"):
        memory_cgroup.MemoryGroups(memory_cgroup.Hierarchy(2, blocked), 1)  # not a folder: nothing can be made under it


def test_v1_groups_limit_memory_and_swap_together(tmp_path):
    own = tmp_path / "v1" / "process_api" / "abc"
    own.mkdir(parents=True)
    groups = memory_cgroup.MemoryGroups(memory_cgroup.Hierarchy(1, own), 2 << 30)
    group = groups.make()
    assert (group / "memory.limit_in_bytes").read_text() == str(2 << 30)
    (group / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    assert not groups.oom_killed(group)
