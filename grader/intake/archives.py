"""A zip as handed in, read as a stream: caps on members and size, no links, no paths that leave it.

Nothing is written to disk and nothing is unpacked up front: the zip is read through its file (never loaded
whole), its code files (``.py``, ``.ipynb``) are listed, and each member is unpacked only when it is read,
one at a time, no further than its cap whatever its header claims, every byte counted against the
student's totals (``Tally``). A member that does not unpack (a damaged deflate or LZMA stream, an unknown
method, a password) refuses the zip with the reason. macOS's ``__MACOSX/`` copies and hidden files are
passed over.
"""

from __future__ import annotations

import stat
import zipfile
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import BinaryIO

from grader.intake.reading import Caps, PastTotals, Refused, Tally, mib
from grader.messages import Message

CODE_SUFFIXES = (".py", ".ipynb", ".r", ".rmd", ".qmd")  # grader.intake.r_source.R_SUFFIXES
ERROR_SHOWN = 120  # characters of the zip library's own error quoted to the student


def _skipped(parts: tuple[str, ...]) -> bool:
    return any(p.startswith(".") or p in ("__MACOSX", "__pycache__") for p in parts)


def _bad(name: str, exc: BaseException) -> Refused:
    return Refused(Message("intake.zip_bad", {"name": name, "error": f"{type(exc).__name__}: {exc}"[:ERROR_SHOWN]}))


def code_members(file: BinaryIO, name: str, caps: Caps,
                 tally: Tally) -> tuple[list[tuple[PurePosixPath, Callable[[], bytes]]], list[Message]]:
    """The zip's code files by their path inside it, each with a function that unpacks it (``Refused`` when
    it cannot), and notes on the members left out. ``file`` stays open while the readers are used."""
    tally.zip_opened()
    try:
        archive = zipfile.ZipFile(file)
        members = archive.infolist()
    except Exception as exc:  # noqa: BLE001 - hostile bytes: BadZipFile, a forged directory, struct and size errors
        raise _bad(name, exc) from None
    if len(members) > caps.zip_members:
        raise Refused(Message("intake.zip_members", {"name": name, "count": len(members), "limit": caps.zip_members}))
    unpacked = [0]  # this zip's members read so far, against caps.zip_unpacked_bytes
    files: list[tuple[PurePosixPath, Callable[[], bytes]]] = []
    left_out: list[str] = []
    for info in members:
        raw = info.filename.replace("\\", "/")
        path = PurePosixPath(raw)
        if info.is_dir() or _skipped(path.parts) or path.suffix.lower() not in CODE_SUFFIXES:
            continue
        if path.is_absolute() or ".." in path.parts or ":" in path.parts[0]:
            left_out.append(raw)  # a path that would leave the folder it is unpacked into
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            left_out.append(raw)  # a symbolic link: never followed, never unpacked
            continue
        files.append((path, lambda i=info: _unpack(archive, i, name, caps, tally, unpacked)))
    notes = [Message("intake.zip_left_out", {"name": name, "members": ", ".join(left_out[:5])})] if left_out else []
    return files, notes


def _unpack(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, caps: Caps, tally: Tally,
            unpacked: list[int]) -> bytes:
    """One member's bytes, read no further than the least of its own cap, the zip's and the student's."""
    zip_left = caps.zip_unpacked_bytes - unpacked[0]
    limit = min(caps.limit(PurePosixPath(info.filename).suffix), zip_left, tally.bytes_left())
    try:
        with archive.open(info) as member:
            body = member.read(limit + 1)
    except Exception as exc:  # noqa: BLE001 - zlib.error, LZMAError, BadZipFile (CRC), NotImplementedError, ...
        raise _bad(name, exc) from None
    if len(body) > limit:
        if limit == tally.bytes_left() and limit < zip_left:
            raise PastTotals("bytes", mib(caps.student_bytes))
        raise Refused(Message("intake.zip_too_big", {"name": name, "limit": mib(caps.zip_unpacked_bytes)}))
    unpacked[0] += len(body)
    tally.read(len(body))
    return body
