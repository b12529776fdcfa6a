"""Reading a hand-in's bytes as hostile data: ``lstat`` first, regular files only, no links followed, capped,
and counted against the student's totals (``Tally``) across everything they handed in."""

from __future__ import annotations

import os
import stat
import sys
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
    # Totals across everything one student handed in (files, folders and zips together).
    student_bytes: int = 64 * MIB  # bytes read, zip members unpacked included
    student_files: int = 200  # code files read (each zip member counts)
    student_zips: int = 16  # zips opened
    notebook_cells: int = 2000  # notebook cells, all notebooks together
    code_bytes: int = 4 * MIB  # what is graded: the chosen file's code and its helper modules
    ipython_lines: int = 200  # lines IPython's transformer rewrites (it re-reads the whole cell for each)
    # The helper process that reads a hand-in (grader.intake.bounded); its time counts in the submission's budget.
    seconds: float = 20.0
    memory_bytes: int = 512 * MIB  # address space (Python, numpy, nbformat and IPython themselves take 155 MiB)

    def limit(self, suffix: str) -> int:
        return {".ipynb": self.notebook_bytes, ".zip": self.zip_bytes}.get(suffix.lower(), self.source_bytes)


DEFAULT_CAPS = Caps()


class Refused(Exception):
    """A hand-in the grader will not read; ``message`` says why and what to do."""

    def __init__(self, message: Message):
        super().__init__(message.key)
        self.message = message


class PastTotals(Refused):
    """Past one of the student's totals (``Caps``: bytes, files, zips, notebook cells): the whole hand-in is refused,
    never only the file being read, so that the intake's loops, which pass over a file they cannot read, let it
    through."""

    def __init__(self, what: str, limit: float):
        super().__init__(Message(f"intake.total_{what}", {"limit": limit}))


class Tally:
    """What one student's hand-in has cost so far, against the totals of ``Caps``: past one, ``PastTotals``."""

    def __init__(self, caps: Caps):
        self.caps = caps
        self.bytes = self.files = self.zips = self.cells = 0

    def read(self, size: int) -> None:
        self.files += 1
        self.bytes += size
        self._check("files", self.files, self.caps.student_files)
        self._check("bytes", self.bytes, self.caps.student_bytes)

    def zip_opened(self) -> None:
        self.zips += 1
        self._check("zips", self.zips, self.caps.student_zips)

    def bytes_left(self) -> int:
        return max(0, self.caps.student_bytes - self.bytes)

    def notebook(self, cells: int) -> None:
        self.cells += cells
        self._check("cells", self.cells, self.caps.notebook_cells)

    @staticmethod
    def _check(what: str, count: int, limit: int) -> None:
        if count > limit:
            shown = mib(limit) if what == "bytes" else limit
            raise PastTotals(what, shown)


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


def open_regular(path: Path, limit: int, name: str):
    """The regular file ``path`` opened for reading (a binary file object); ``Refused`` for anything else.

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
    now = os.fstat(fd)
    if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise Refused(Message("intake.changed", {"name": name}))
    return os.fdopen(fd, "rb")


def peek(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of the regular file ``path`` whatever its size (``open_regular``'s checks), b"" for
    anything else: a look that decides nothing about the hand-in (which the intake reads as always), only what to
    get ready for it."""
    try:
        with open_regular(path, sys.maxsize, path.name) as file:
            return file.read(size)
    except (Refused, OSError):
        return b""


def read_regular(path: Path, limit: int, name: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (``open_regular``'s checks first)."""
    with open_regular(path, limit, name) as file:
        data = file.read(limit + 1)
    if len(data) > limit:  # it grew after the lstat
        raise Refused(Message("intake.too_big", {"name": name, "size": mib(len(data)), "limit": mib(limit)}))
    return data
