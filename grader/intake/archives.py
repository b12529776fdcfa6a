"""A zip as handed in, read in memory: caps on members and unpacked size, no links, no paths that leave it.

Nothing is written to disk: only the code files (``.py``, ``.ipynb``) are unpacked, each read no further
than its cap whatever its header claims. macOS's ``__MACOSX/`` copies and hidden files are passed over.
"""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import PurePosixPath

from grader.intake.reading import Caps, Refused, mib
from grader.messages import Message

CODE_SUFFIXES = (".py", ".ipynb", ".r", ".rmd", ".qmd")  # grader.intake.r_source.R_SUFFIXES


def _skipped(parts: tuple[str, ...]) -> bool:
    return any(p.startswith(".") or p in ("__MACOSX", "__pycache__") for p in parts)


def code_files(data: bytes, name: str, caps: Caps) -> tuple[dict[PurePosixPath, bytes], list[Message]]:
    """The zip's code files by their path inside it, and notes on the members left out."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:  # BadZipFile also covers a forged directory
        raise Refused(Message("intake.zip_bad", {"name": name, "error": str(exc)[:120]})) from None
    if len(members) > caps.zip_members:
        raise Refused(Message("intake.zip_members", {"name": name, "count": len(members), "limit": caps.zip_members}))
    files: dict[PurePosixPath, bytes] = {}
    left_out: list[str] = []
    unpacked = 0
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
        limit = min(caps.limit(path.suffix), caps.zip_unpacked_bytes - unpacked)
        try:
            with archive.open(info) as member:
                body = member.read(limit + 1)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError) as exc:
            raise Refused(Message("intake.zip_bad", {"name": name, "error": str(exc)[:120]})) from None
        if len(body) > limit:
            raise Refused(Message("intake.zip_too_big", {"name": name, "limit": mib(caps.zip_unpacked_bytes)}))
        unpacked += len(body)
        files[path] = body
    notes = [Message("intake.zip_left_out", {"name": name, "members": ", ".join(left_out[:5])})] if left_out else []
    return files, notes
