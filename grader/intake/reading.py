"""Reading a hand-in's bytes as hostile data: ``lstat`` first, regular files only, no links followed, capped."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.messages import Message

MIB = 1024**2


@dataclass(frozen=True)
class Caps:
    """How much of a hand-in the grader reads at most (stated to the student when exceeded)."""

    source_bytes: int = 2 * MIB  # one .py file
    notebook_bytes: int = 32 * MIB  # one .ipynb (outputs, images included, are read and dropped)
    zip_bytes: int = 32 * MIB  # one .zip as handed in
    zip_members: int = 500  # entries of one zip
    zip_unpacked_bytes: int = 64 * MIB  # what a zip's code files unpack to, together
    folder_entries: int = 2000  # entries looked at inside one student's folder
    folder_depth: int = 6  # folders inside a student's folder
    helpers: int = 20  # sibling .py files loaded as helper modules

    def limit(self, suffix: str) -> int:
        return {".ipynb": self.notebook_bytes, ".zip": self.zip_bytes}.get(suffix.lower(), self.source_bytes)


DEFAULT_CAPS = Caps()


class Refused(Exception):
    """A hand-in the grader will not read; ``message`` says why and what to do."""

    def __init__(self, message: Message):
        super().__init__(message.key)
        self.message = message


def kind_of(mode: int) -> str:
    """What an ``lstat`` mode is, in the words of the refusal messages."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special"  # a socket, or something stranger


def mib(size: int) -> float:
    return round(size / MIB, 1)


def read_regular(path: Path, limit: int, name: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit``; ``Refused`` for anything else.

    ``lstat`` decides before anything is opened; the open itself follows no link and does not block (a
    FIFO swapped in meanwhile opens at once), and ``fstat`` must find the same regular file."""
    try:
        before = os.lstat(path)
    except OSError as exc:
        raise Refused(Message("intake.unreadable", {"name": name, "error": exc.strerror or str(exc)})) from None
    kind = kind_of(before.st_mode)
    if kind != "file":
        raise Refused(Message(f"intake.{kind}", {"name": name}))
    if before.st_size > limit:
        raise Refused(Message("intake.too_big", {"name": name, "size": mib(before.st_size), "limit": mib(limit)}))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:  # ELOOP: it became a link after the lstat
        raise Refused(Message("intake.unreadable", {"name": name, "error": exc.strerror or str(exc)})) from None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise Refused(Message("intake.changed", {"name": name}))
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:  # it grew after the lstat
        raise Refused(Message("intake.too_big", {"name": name, "size": mib(len(data)), "limit": mib(limit)}))
    return data
