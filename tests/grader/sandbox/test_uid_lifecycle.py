"""A sandbox uid's life (grader/sandbox/uid_lifecycle.py), with real processes as root: drawn free, run as with
nothing of root's, every process of it killed, what it left removed."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from grader.sandbox import uid_lifecycle

from ..conftest import needs_system

pytestmark = needs_system(os.geteuid() != 0, "needs root to run as another uid")


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def test_the_uids_of_every_process_are_read_from_proc():
    found = dict(uid_lifecycle.process_uids())
    assert found[os.getpid()] == (os.getuid(), os.geteuid(), os.getuid(), os.geteuid())


def test_a_drawn_uid_is_in_the_graders_range_held_by_nobody_and_never_one_already_used():
    first = uid_lifecycle.free_uid()
    second = uid_lifecycle.free_uid({first})
    for uid in (first, second):
        assert uid_lifecycle.FIRST_UID <= uid < uid_lifecycle.LAST_UID
        assert uid not in {u for _, uids in uid_lifecycle.process_uids() for u in uids}
    assert first != second


@pytest.mark.sandbox  # runs a process as a sandbox uid, through setpriv
def test_a_command_run_as_a_uid_has_its_uid_and_gid_no_group_no_capability_and_no_new_privileges():
    uid = uid_lifecycle.free_uid()
    proc = subprocess.Popen([*uid_lifecycle.run_as(uid), "sleep", "30"])
    try:
        time.sleep(0.3)
        status = _status(proc.pid)
        assert status["Uid"].split() == [str(uid)] * 4 and status["Gid"].split() == [str(uid)] * 4
        assert status["Groups"].strip() == ""
        assert {status[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == {"0000000000000000"}
        assert status["NoNewPrivs"] == "1"
    finally:
        uid_lifecycle.release(uid)
    assert proc.wait(timeout=5) == -9


@pytest.mark.sandbox  # runs a process as a sandbox uid, through setpriv
def test_release_kills_every_process_of_the_uid_even_one_that_left_its_group_and_removes_its_files():
    uid = uid_lifecycle.free_uid()
    left = f"/tmp/left-by-{uid}"
    # a daemon of its own session, and a file in a folder open to all
    script = f"touch {left}; setsid sleep 60 & sleep 60"
    proc = subprocess.Popen([*uid_lifecycle.run_as(uid), "sh", "-c", script], start_new_session=True)
    for _ in range(50):
        if os.path.exists(left) and sum(1 for _, uids in uid_lifecycle.process_uids() if uids[0] == uid) >= 3:
            break
        time.sleep(0.1)
    assert os.path.exists(left)
    uid_lifecycle.release(uid)
    assert proc.wait(timeout=5) == -9  # reaped: a zombie of ours would still be listed with its uid
    assert [pid for pid, uids in uid_lifecycle.process_uids() if uids[0] == uid] == []
    assert not os.path.exists(left)
