"""A class's download zip, as Moodle or Canvas makes it, opened as a batch folder.

The zip is read by the intake's own zip reader (``grader.intake.archives.code_members``: no links, no paths that
leave it, members and unpacked bytes capped), with the caps of a whole class (``CLASS_CAPS``); a zip a student
handed in (Canvas keeps it whole) is copied out as it is, under the per-student zip cap, for the intake to open
when that student is read. What comes out is written to a private temporary folder, which the batch then reads
exactly as a folder the instructor unpacked (every student read again under the per-student caps).

Names: Moodle and Canvas write UTF-8 names without the zip flag that says so; a name that Python's zipfile read as
cp437 and that is valid UTF-8 is read as UTF-8 (``Conceição``, not ``ConceiτÒo``).
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path, PurePosixPath

from grader.intake.archives import code_members
from grader.intake.reading import DEFAULT_CAPS, Caps, Refused, Tally, read_regular

# A class's zip: 40 times a student's members, 8 times a student's zip bytes and unpacked bytes.
CLASS_CAPS = replace(DEFAULT_CAPS, zip_bytes=8 * DEFAULT_CAPS.zip_bytes, zip_members=40 * DEFAULT_CAPS.zip_members,
                     zip_unpacked_bytes=8 * DEFAULT_CAPS.zip_unpacked_bytes)


def code_files(data: bytes, name: str, caps: Caps) -> tuple[dict[PurePosixPath, bytes], list]:
    """The class zip's code files by their path inside it, unpacked by the intake's zip reader with the class's
    caps (its totals are the zip's own: a class holds many students' files), and notes on members left out."""
    tally = Tally(replace(caps, student_files=caps.zip_members, student_bytes=caps.zip_unpacked_bytes,
                          student_zips=1))
    members, notes = code_members(io.BytesIO(data), name, caps, tally)
    return {path: read() for path, read in members}, notes


class DownloadError(ValueError):
    """The download cannot be read as a class: the reason, in English, for the person running the grader."""


def utf8_name(name: str) -> str:
    """A member name as the LMS wrote it: zipfile's cp437 reading undone where the bytes are UTF-8."""
    try:
        fixed = name.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return name
    return fixed


def _top_names(data: bytes) -> tuple[set[str], set[str]]:
    """The zip's top-level folders and files by name alone (nothing unpacked): a Moodle student who typed only
    online text has a folder of their own and no code file, and still gets a row."""
    folders, files = set(), set()
    for info in zipfile.ZipFile(io.BytesIO(data)).infolist():
        parts = PurePosixPath(info.filename.replace("\\", "/")).parts
        if not parts or parts[0] in ("", ".", "..", "/", "__MACOSX") or parts[0].startswith("."):
            continue
        if len(parts) > 1 or info.is_dir():
            folders.add(utf8_name(parts[0]))
        elif PurePosixPath(parts[0]).suffix.lower() not in (".py", ".ipynb", ".zip"):
            files.add(utf8_name(parts[0]))  # code files come whole from the intake's reader, or not at all
    return folders, files


def _student_zips(data: bytes, unpacked: int) -> dict[PurePosixPath, bytes]:
    """The .zip members (a student's own zip), each under the per-student zip cap, links and escapes left out."""
    found: dict[PurePosixPath, bytes] = {}
    archive = zipfile.ZipFile(io.BytesIO(data))
    for info in archive.infolist():
        path = PurePosixPath(info.filename.replace("\\", "/"))
        if (info.is_dir() or path.suffix.lower() != ".zip" or path.is_absolute() or ".." in path.parts
                or any(p.startswith(".") or p == "__MACOSX" for p in path.parts)
                or stat.S_ISLNK(info.external_attr >> 16) or info.file_size > DEFAULT_CAPS.zip_bytes):
            continue
        with archive.open(info) as member:
            body = member.read(DEFAULT_CAPS.zip_bytes + 1)
        unpacked += len(body)
        if len(body) > DEFAULT_CAPS.zip_bytes or unpacked > CLASS_CAPS.zip_unpacked_bytes:
            continue  # refused the same way by the intake if it were there: that student's row says "too big"
        found[path] = body
    return found


@contextmanager
def opened(path: Path) -> Iterator[Path]:
    """The download at ``path`` unpacked into a private folder (removed on exit); DownloadError if it is no zip
    or is past the class caps."""
    try:
        data = read_regular(path, CLASS_CAPS.zip_bytes, path.name)
        files, _ = code_files(data, path.name, CLASS_CAPS)
        files.update(_student_zips(data, sum(len(b) for b in files.values())))
        top_folders, top_files = _top_names(data)
    except Refused as exc:
        raise DownloadError(f"{path} cannot be read as a class download: {exc.message.text('en')}") from None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, NotImplementedError) as exc:
        raise DownloadError(f"{path} cannot be read as a class download: {exc}") from None
    folder = Path(tempfile.mkdtemp(prefix="grader-download-"))  # mode 0700: this user's alone
    try:
        for name in top_folders:  # named as in the zip; what is in them comes below (code files only)
            if "/" not in name and "\0" not in name:
                (folder / name).mkdir(exist_ok=True)
        for name in top_files:  # a file that is no code (online text): its name alone, for the student's row
            if "/" not in name and "\0" not in name and not (folder / name).exists():
                (folder / name).touch(mode=0o600)
        for member, body in files.items():
            parts = [utf8_name(p) for p in member.parts]
            if any(p in ("", ".", "..") or "/" in p or "\0" in p for p in parts):
                continue
            target = folder.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            try:
                fd = os.open(target, flags, 0o600)
            except FileExistsError:
                continue  # two members with one name once decoded: the first is kept
            with os.fdopen(fd, "wb") as out:
                out.write(body)
        if not files:
            raise DownloadError(f"{path} holds no .py, .ipynb or .zip file: is it the LMS's download?")
        yield _class_folder(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _class_folder(folder: Path) -> Path:
    """Where the students are: the zip's top, or the one folder everything is in (a download zipped again)."""
    while True:
        entries = [e for e in os.scandir(folder) if not e.name.startswith(".") and e.name != "__MACOSX"]
        if len(entries) != 1 or not entries[0].is_dir(follow_symlinks=False) or "_assign" in entries[0].name:
            return folder
        folder = Path(entries[0].path)




def class_download(path: Path) -> tuple[int, str] | None:
    """(students, LMS) when the zip at ``path`` is a class's download (two students or more named by one LMS's
    layout at its top), else None. Names alone are read."""
    from grader.intake import layouts
    from grader.lms.identity import PLAIN

    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()[: CLASS_CAPS.zip_members]
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    students: dict[str, set[str]] = {}
    for name in names:
        parts = name.replace("\\", "/").split("/")
        named = layouts.parse(utf8_name(parts[0]), len(parts) > 1)
        if named.lms != PLAIN:
            students.setdefault(named.lms, set()).add(named.lms_id)
    best = max(students.items(), key=lambda item: len(item[1]), default=None)
    return (len(best[1]), best[0]) if best and len(best[1]) >= 2 else None
