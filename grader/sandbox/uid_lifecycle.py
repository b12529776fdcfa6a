"""A sandbox uid's life, as root: drawn free, run as, then every process of it killed and what it left removed.

The grader hands out uids of no account (the warm server's in the namespaces mode, one per submission in the
uid mode), each in [FIRST_UID, LAST_UID):

- ``free_uid`` draws one that no account, process, file, IPC object or key has (``uid_leftovers.held_by``);
  ``server_uid`` is the warm server's, one per grader;
- ``run_as`` is the ``setpriv`` prefix that runs a command as it: no groups, no capabilities, ``no_new_privs``,
  written here only (bubblewrap's server, a uid mode child, the keys script all take it);
- ``prepare`` walks the disk once for where a uid could leave files; ``lock_keys`` closes its kernel keyrings to
  it before its submission runs (``uid_keys.py``);
- ``release`` ends it: every process of the uid killed, daemons that left the process group included, then
  what it left behind removed (``uid_leftovers.remove_all_of``).

``/proc/*/status`` is read here only (``process_uids``): for the uids a draw must avoid, and for the processes
``kill_uid`` ends.
"""

from __future__ import annotations

import functools
import grp
import os
import pwd
import secrets
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from grader.sandbox import uid_leftovers

# Every uid the grader hands out (the server's as root, a submission's in the uid mode) is in [FIRST_UID, LAST_UID).
FIRST_UID = 420_000
LAST_UID = 1 << 30  # far above any account a system or a directory service makes


def run_as(uid: int) -> list[str]:
    """The ``setpriv`` prefix that runs the command after it as ``uid`` (and the gid of that number), with no
    supplementary group, no capability (inheritable or bounding) and ``no_new_privs``."""
    return [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]


def process_uids(proc: Path = Path("/proc")) -> Iterator[tuple[int, tuple[int, ...]]]:
    """(pid, its real, effective, saved and filesystem uids) of every process on the machine that can be read; the
    one parser of ``/proc/PID/status``."""
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            status = (proc / entry / "status").read_text()
        except OSError:
            continue
        if "\nUid:" in status:
            yield int(entry), tuple(int(u) for u in status.split("\nUid:", 1)[1].split("\n", 1)[0].split())


def _is_account(uid: int) -> bool:
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            pass
    return False


def free_uid(used: set[int] = frozenset()) -> int:
    """A uid (and gid of the same number) that no account, process, file, IPC object or key has, drawn at
    random from [FIRST_UID, LAST_UID) and not in ``used``: a submission run as it shares nothing with
    anyone, and killing every process of it can only hit the submission's own."""
    busy = {uid for _, uids in process_uids() for uid in uids}
    for _ in range(1000):
        uid = FIRST_UID + secrets.randbelow(LAST_UID - FIRST_UID)
        if uid not in used and uid not in busy and not _is_account(uid) and not uid_leftovers.held_by(uid):
            return uid
    raise RuntimeError("no free uid found in 1000 draws")


@functools.cache
def server_uid() -> int:
    """The warm server's uid as root: one free uid for this grader's lifetime."""
    return free_uid()


def prepare() -> None:
    """Before the first uid is handed out: the walk of the disk for the places a uid could leave files in, once per
    grader (``uid_leftovers.writable_places``), so that no submission's clock pays for it."""
    uid_leftovers.writable_places()


def lock_keys(uid: int) -> str:
    """Before ``uid``'s submission runs: its user keyrings made and closed to it (uid_keys.py); their serials,
    for ``release``."""
    return uid_leftovers.lock_keys(run_as(uid))


def kill_uid(uid: int) -> None:
    """SIGKILL every process whose real uid is ``uid`` until none is left (a fork racing the scan is caught next
    round)."""
    for _ in range(100):
        found = False
        for pid, uids in process_uids():
            if uids[:1] == (uid,):
                found = True
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if not found:
            return
        time.sleep(0.02)


def release(uid: int, keyrings: str = "") -> None:
    """End ``uid``: every process of it killed (daemons that left the process group included), then what it left
    removed (files, IPC objects, keys; ``keyrings``: what ``lock_keys`` returned)."""
    kill_uid(uid)
    uid_leftovers.remove_all_of(uid, keyrings)
