"""A launcher's placement of its children (grader/sandbox/memory_placement.py), on real processes: first for the
OOM killer, in a memory group of their own where one can be had, the group's end telling of a kill for memory."""

import subprocess
from pathlib import Path

from grader.sandbox.limits import Limits
from grader.sandbox.memory_placement import Placement


def test_a_placed_process_is_first_for_the_oom_killer_and_its_group_ends_with_it():
    placement = Placement(jobs=1, floor=1)
    proc = subprocess.Popen(["sleep", "30"])
    try:
        group = placement.place(proc.pid, Limits())
        assert Path(f"/proc/{proc.pid}/oom_score_adj").read_text().strip() == "1000"
        assert (group is None) == (placement.share is None)  # a group, exactly where cgroups could be had
        assert placement.why_no_cgroup is not None  # asked, and answered ("" when a group was made)
        proc.kill()
        proc.wait()
        assert placement.release(group) is False  # killed by us, not by the kernel for memory
        assert group is None or not group.exists()
    finally:
        proc.kill()
        placement.close()


def test_releasing_no_group_is_no_kill():
    assert Placement().release(None) is False
