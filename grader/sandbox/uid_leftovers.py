"""What a uid can leave behind once its processes are gone, found and removed (the uid mode, as root).

A process outlives nothing of its own here, but other things do: files in the world-writable folders,
System V shared memory, message queues and semaphores, POSIX message queues, and kernel keys in the
uid's user keyrings. Without namespaces a later submission could read any of them, and a uid's keys
and IPC objects count against limits the whole machine shares. ``remove_all_of`` removes them;
``held_by`` says whether anything is held, so that a uid is checked before it is handed out.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue")  # where any uid may leave files behind
SYSVIPC = Path("/proc/sysvipc")
KEY_USERS = Path("/proc/key-users")
IPC_RMID = 0
# Run as the uid itself (only a keyring's owner may clear it): empty and invalidate its user keyring and
# user session keyring; KEYCTL_CLEAR = 7, KEYCTL_INVALIDATE = 21, @u = -4, @us = -5.
_CLEAR_KEYS = """
import ctypes, os
number = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
libc = ctypes.CDLL(None)
for ring in (-4, -5):
    libc.syscall(number, 7, ring)
    libc.syscall(number, 21, ring)
"""


def _files_of(uid: int) -> list[os.DirEntry]:
    found = []
    for folder in SHARED_FOLDERS:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    found.append(entry)
            except OSError:
                pass
    return found


def ipc_objects(uid: int, root: Path = SYSVIPC) -> list[tuple[str, int]]:
    """(kind, id) of every System V object ``uid`` owns or created: kind is shm, msg or sem."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            header, *rows = (root / kind).read_text().splitlines()
        except (OSError, ValueError):
            continue
        names = header.split()
        for row in rows:
            fields = dict(zip(names, row.split(), strict=False))
            if str(uid) in (fields.get("uid"), fields.get("cuid")):
                ident = fields.get("shmid") or fields.get("msqid") or fields.get("semid")
                if ident is not None:
                    found.append((kind, int(ident)))
    return found


def has_keys(uid: int, key_users: Path = KEY_USERS) -> bool:
    """Whether the kernel holds any key of ``uid`` (its user keyrings included)."""
    try:
        lines = key_users.read_text().splitlines()
    except OSError:
        return False
    return any(line.split(":", 1)[0].strip() == str(uid) for line in lines)


def held_by(uid: int) -> list[str]:
    """What ``uid`` holds outside any process: empty for a uid that may be handed out."""
    held = [entry.path for entry in _files_of(uid)]
    held += [f"System V {kind} {ident}" for kind, ident in ipc_objects(uid)]
    if has_keys(uid):
        held.append("kernel keys")
    return held


def _remove_ipc(kind: str, ident: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if kind == "shm":
        libc.shmctl(ident, IPC_RMID, None)
    elif kind == "msg":
        libc.msgctl(ident, IPC_RMID, None)
    else:
        libc.semctl(ident, 0, IPC_RMID)


def _clear_keys(uid: int) -> None:
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    subprocess.run([setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--",
                    os.path.realpath(sys.executable), "-I", "-S", "-c", _CLEAR_KEYS],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=30, cwd="/")


def remove_all_of(uid: int) -> None:
    """Delete what ``uid`` left (its processes already killed): files, IPC objects, keys."""
    for entry in _files_of(uid):
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass
    for kind, ident in ipc_objects(uid):
        _remove_ipc(kind, ident)
    if has_keys(uid):
        try:
            _clear_keys(uid)
        except (OSError, subprocess.SubprocessError):
            pass
