"""What a uid can leave behind once its processes are gone, found and removed (the uid mode, as root).

A process outlives nothing of its own here, but other things do: files in every folder any user may
write to, System V shared memory, message queues and semaphores, POSIX message queues, and kernel keys.
Without namespaces a later submission could read any of them, and a uid's keys and IPC objects count
against limits the whole machine shares. ``remove_all_of`` removes them; ``held_by`` says whether anything is held, so
that a uid is checked before it is handed out.

Files: a fresh uid owns no folder and belongs to no group, so it can make a file only in a folder that
every user may write to and pass (``o+wx``), or below one it made there. ``writable_places`` finds
every such folder the uid can reach (each folder on the way ``o+x``) by walking the whole disk once per
grader, from ``/`` without following links (``/proc`` and ``/sys`` hold nothing a uid can leave), at
most ``WALK_LIMIT`` folders; ``files_of`` then walks each place, through every folder the uid can pass,
and takes what the uid owns (a folder of its own with all it holds). That is for removing, after the uid ran.
Before a uid is handed out, ``held_by`` only lists the known places and the folders open to all inside them
(``entries_of``): milliseconds, whatever other users keep in /tmp. Kernel keys: ``uid_keys.py``.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

# Always looked at, whatever the walk finds: where any uid may write on a usual Linux machine.
KNOWN_PLACES = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/var/lock", "/var/crash")
NOT_WALKED = ("/proc", "/sys")  # the kernel's views: no file a uid makes there outlives it
WALK_LIMIT = 200_000  # folders looked at, at most, by one walk (the disk: ~60,000 on a test machine)
SYSVIPC = Path("/proc/sysvipc")
KEY_USERS = Path("/proc/key-users")
KEYS_SCRIPT = Path(__file__).with_name("uid_keys.py")
IPC_RMID = 0


def _folders_below(top: str, limit: int):
    """(path, lstat) of every folder below ``top`` that other users may pass, links not followed, after
    looking at ``limit`` folders at most. A folder with two links has no folder in it (ext4, tmpfs): it is
    not opened."""
    todo, seen = [top], 0
    while todo and seen < limit:
        try:
            entries = os.scandir(todo.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if not entry.is_dir(follow_symlinks=False) or entry.path in NOT_WALKED:
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                seen += 1
                if info.st_mode & stat.S_IXOTH:
                    yield entry.path, info
                    if info.st_nlink != 2:
                        todo.append(entry.path)


def _open_to_all(info: os.stat_result) -> bool:
    return info.st_mode & (stat.S_IWOTH | stat.S_IXOTH) == stat.S_IWOTH | stat.S_IXOTH


def find_places(root: str = "/", limit: int = WALK_LIMIT) -> tuple[str, ...]:
    """Every folder below ``root`` any user may write to and reach, outermost only (the walk of a place
    covers the places inside it)."""
    found = sorted(path for path, info in _folders_below(root, limit) if _open_to_all(info))
    outermost = []
    for path in found:
        if not any(path.startswith(outer.rstrip("/") + "/") for outer in outermost):
            outermost.append(path)
    return tuple(outermost)


def known_places() -> tuple[str, ...]:
    return tuple(p for p in KNOWN_PLACES if os.path.isdir(p) and not os.path.islink(p))


@functools.cache
def writable_places() -> tuple[str, ...]:
    """The places of this machine (``find_places`` and the known ones), walked once per grader."""
    return tuple(sorted(set(find_places()) | set(known_places())))


def files_of(uid: int, places: tuple[str, ...], limit: int = WALK_LIMIT) -> list[str]:
    """Every file, link or folder ``uid`` owns in ``places``, outermost only (a folder of its own holds the
    rest), found through every folder the uid could pass, links not followed."""
    found, todo, seen = [], list(places), 0
    while todo and seen < limit:
        try:
            entries = os.scandir(todo.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_uid == uid:
                    found.append(entry.path)
                elif stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IXOTH:
                    todo.append(entry.path)
    return found


def entries_of(uid: int, places: tuple[str, ...]) -> list[str]:
    """What ``uid`` owns directly in ``places``, or in a folder open to all (``o+wx``) reached from them through
    such folders only. The outermost thing a uid owns lies in a folder it could write to, and a uid with no
    account, group or folder of its own can write only where every user may: one listing per such folder, never
    a walk through what other users keep there (a folder open to all below a closed one is left to the walk of
    ``remove_all_of``, after a uid's run)."""
    found, todo = [], list(places)
    while todo:
        try:
            entries = os.scandir(todo.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_uid == uid:
                    found.append(entry.path)
                elif stat.S_ISDIR(info.st_mode) and _open_to_all(info):
                    todo.append(entry.path)
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


def held_by(uid: int, places: tuple[str, ...] | None = None) -> list[str]:
    """What ``uid`` holds outside any process: empty for a uid that may be handed out. Files are looked for in
    ``places``, by default the known ones, by ``entries_of`` (a listing, not a walk: this runs on every start):
    a uid drawn at random from a billion holds nothing anywhere unless an earlier grader used it, and that one
    removed what it left from every place (``remove_all_of``)."""
    held = entries_of(uid, known_places() if places is None else places)
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


def _keys_script(args: list[str], prefix: list[str]) -> str:
    """Run uid_keys.py with ``args`` (as the uid, where ``prefix`` is its setpriv); what it printed."""
    done = subprocess.run([*prefix, os.path.realpath(sys.executable), "-I", "-S", "-c", KEYS_SCRIPT.read_text(),
                           *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, cwd="/")
    return done.stdout.strip()


def _remove_message_queues(uid: int) -> None:
    """POSIX message queues live in the kernel whether or not ``/dev/mqueue`` is mounted: mount their file
    system over ``/tmp`` in a mount namespace of the helper's own (nothing outside it sees the mount) and
    delete the uid's there."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return
    subprocess.run([unshare, "--mount", "--propagation", "private", "sh", "-c",
                    'mount -t mqueue none /tmp && find /tmp -xdev -mindepth 1 -uid "$1" -delete', "sh", str(uid)],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=30, cwd="/")


def lock_keys(run_as: list[str]) -> str:
    """Before a uid's submission runs: its user keyrings made and closed to it (uid_keys.py, run as the uid by the
    prefix ``run_as``, ``uid_lifecycle.run_as``); their serials, for ``remove_all_of``."""
    try:
        return _keys_script(["lock"], run_as)
    except (OSError, subprocess.SubprocessError):
        return ""


def remove_all_of(uid: int, keyrings: str = "") -> None:
    """Delete what ``uid`` left (its processes already killed): files, IPC objects, keys. ``keyrings``: what
    ``lock_keys`` returned."""
    for path in files_of(uid, writable_places()):
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                shutil.rmtree(path, ignore_errors=True)  # never follows a link (it works from folder fds)
            else:
                os.unlink(path)
        except OSError:
            pass
    for kind, ident in ipc_objects(uid):
        _remove_ipc(kind, ident)
    try:
        _remove_message_queues(uid)
        _keys_script(["clear", str(uid), keyrings], [])
    except (OSError, subprocess.SubprocessError):
        pass
