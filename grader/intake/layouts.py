"""The download layouts of the learning-management systems, and the student each entry names.

Every layout is a regular expression over one entry's name (a file or a folder at the top of the download),
with named groups, as nbgrader's ``zip_collect`` describes a download:

- ``student`` (required): the student's name as the LMS spells it;
- ``id`` (required): the student's id in the LMS; entries with the same LMS and id are one student;
- ``late`` (optional): matched (non-empty) when the LMS marked the hand-in late;
- ``file`` (optional): the file's own name after the prefix; absent or empty for a folder of its own;
- ``plugin`` (optional): where the LMS says what kind of hand-in it is; an entry whose plugin is not
  Moodle's ``assignsubmission_file`` (``grader.lms.moodle.SUBMISSION_PLUGIN``; Moodle's online text, comments,
  ...) is not a submission, but its student still gets a row.

The built-in layouts (``BUILT_IN``) are each LMS's own, written in its module beside the files that go back to it
(from each LMS's download code): Moodle's folders and files (``grader.lms.moodle``: ``FOLDER``, ``FILE``;
``Full Name_1234567_assignsubmission_file_/``), Canvas's files (``grader.lms.canvas``: ``FILE``;
``conceiçãoanabeatriz_LATE_9100111_240101_atencao.py``).

Another LMS is described by one more pattern (``--lms-pattern NAME=REGEX`` on the command line,
docs/instructors.md). A name in no layout is the student's own (a file's without its suffix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader.lms import canvas, moodle
from grader.lms.identity import PLAIN
from grader.messages import Message

REQUIRED_GROUPS = ("student", "id")
KNOWN_GROUPS = ("student", "id", "late", "file", "plugin")


@dataclass(frozen=True)
class Layout:
    """One LMS's naming: a pattern for folders, one for files (either may be None)."""

    lms: str
    folder: re.Pattern | None
    file: re.Pattern | None

    def match(self, name: str, is_folder: bool) -> re.Match | None:
        pattern = self.folder if is_folder else self.file
        return pattern.fullmatch(name) if pattern is not None else None


def layout(lms: str, pattern: str, folders: bool = True, files: bool = True) -> Layout:
    """A layout from a regex with named groups (``student`` and ``id`` required, ``late``, ``file``, ``plugin``
    optional); a bad pattern is a ValueError naming it."""
    if not re.fullmatch(r"[a-z][a-z0-9_-]{0,30}", lms):
        raise Message.error("usage.lms_name", name=lms)
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise Message.error("usage.lms_regex", name=lms, error=str(exc)) from None
    missing = [g for g in REQUIRED_GROUPS if g not in compiled.groupindex]
    unknown = [g for g in compiled.groupindex if g not in KNOWN_GROUPS]
    if missing or unknown:
        raise Message.error("usage.lms_groups", name=lms, known=", ".join(KNOWN_GROUPS),
                            missing=", ".join(missing) or "-", unknown=", ".join(unknown) or "-")
    return Layout(lms, compiled if folders else None, compiled if files else None)


BUILT_IN = (
    Layout(moodle.LMS, moodle.FOLDER, moodle.FILE),
    Layout(canvas.LMS, None, canvas.FILE),  # Canvas puts every file at the top
)


@dataclass(frozen=True)
class Named:
    """What an entry's name says: whose it is, the file's own name inside it (if any), the layout."""

    lms: str  # moodle | canvas | another layout's name | plain
    lms_id: str  # the student's id in the LMS; for a plain entry, its own name
    student: str  # the name as the LMS spells it (a plain file's without its suffix)
    inner: str  # the file's own name ("" for a folder of its own)
    late: bool = False
    not_submission: bool = False  # an LMS entry of another kind (Moodle's online text): the student, not a hand-in
    entry: str = ""  # the entry's whole name

    @property
    def key(self) -> tuple[str, str]:
        """Entries with the same key belong to the same student: an LMS's id, else the entry alone."""
        return (self.lms, self.lms_id) if self.lms != PLAIN else (PLAIN, self.entry)

    @property
    def identity(self) -> str:
        """What the student's hidden cases are derived from: the LMS and the id there, or a plain entry's own
        name; never the name shown in the gradebook, which may be told apart from a neighbour's."""
        return self.lms_id if self.lms == PLAIN else f"{self.lms}:{self.lms_id}"


def parse(name: str, is_folder: bool, layouts: tuple[Layout, ...] = BUILT_IN) -> Named:
    """The first layout that names the entry, else the entry's own name."""
    for candidate in layouts:
        match = candidate.match(name, is_folder)
        if match is None:
            continue
        groups = match.groupdict()
        plugin = groups.get("plugin")
        inner = groups.get("file") or ""
        return Named(candidate.lms, groups["id"], groups["student"].strip() or groups["id"], inner,
                     late=bool(groups.get("late")),
                     not_submission=plugin is not None and plugin != moodle.SUBMISSION_PLUGIN, entry=name)
    stem = name
    if not is_folder:
        for suffix in (".py", ".ipynb", ".zip", ".r", ".rmd", ".qmd"):
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                stem = name[: -len(suffix)]
    return Named(PLAIN, stem, stem, "", entry=name)
