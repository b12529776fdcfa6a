"""A batch folder's students: every entry a student, files and folders alike, named and told apart.

Each entry at the top of the folder is one student's hand-in: a ``.py``, ``.ipynb`` or ``.zip`` file (any
letter case), or a folder holding one submission anywhere inside. Moodle's and Canvas's download layouts
(``grader.intake.layouts``) name the student and may spread one student over several entries, which are
put back together. A link, FIFO, device or socket where a hand-in should be is still a student: it gets a
row, refused with the reason. Any other entry is not a submission and is listed in the summary with why
(``Skipped``): a file of another kind, an LMS entry of another kind (Moodle's online text), a name starting with
a dot (``.DS_Store``, ``.git``), unless it is an LMS folder with an id (``.Ana_1874600_assignsubmission_file_/``):
that is a student. So every entry of the folder is in a row or in the list. Names that collide (``x.py``
beside the folder ``x/``, or names that differ only in case or Unicode normalisation) are told apart by the
entry they came from, never merged. R files (``.R``, ``.Rmd``, ``.qmd``) are hand-ins as the others are
(``grader.intake.r_source``).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from grader.intake import bounded, layouts
from grader.intake.handin import SUFFIXES, HandIn, Refusal
from grader.intake.names import mixed_scripts, name_key, shown, skeleton
from grader.intake.reading import DEFAULT_CAPS, MIB, Caps, Refused, kind_of, open_regular


@dataclass(frozen=True)
class Entry:
    """One student of a batch folder, before anything of theirs is read."""

    student: str  # unique in the batch, safe to show
    label: str  # the entry (or entries) as named in the folder, safe to show
    paths: tuple[Path, ...]
    inner: tuple[str, ...] = ()  # the files' own names, for LMS layouts that prefix them
    layout: str = "plain"  # the LMS: moodle | canvas | another layout's name | plain
    late: bool = False
    folder: bool = False
    lms_id: str = ""  # the student's id in the LMS ("" for a plain entry)
    display: str = ""  # the name as the LMS spells it, safe to show (``student`` may add the entry to tell it apart)
    identity: str = ""  # what the hidden cases derive from: the LMS and id, else the entry's own name
    lookalike: str = ""  # other students whose names look the same as this one's (a Cyrillic а for a Latin a)

    def open(self, caps: Caps = DEFAULT_CAPS, seconds: float | None = None) -> HandIn | Refusal:
        """What the intake makes of this entry, read in its bounded helper process (``seconds`` at most)."""
        if len(self.paths) == 1 and not self.inner[0]:
            return bounded.read(self.paths[0], caps=caps, seconds=seconds)
        return bounded.read(files=list(zip(self.inner, self.paths, strict=True)), label=self.label, caps=caps,
                            seconds=seconds)

    def mentions(self, word: bytes, caps: Caps = DEFAULT_CAPS) -> bool:
        """Whether the entry's files hold ``word`` as written, read as a stream (links and special files never
        opened); a zip might, and counts as holding it. For the batch's launcher, which imports torch once for
        all if any submission needs it: cheap, and bounded by the folder caps and ``Caps.student_bytes``."""
        left = caps.student_bytes
        for path in self._files(caps):
            if path.suffix.lower() == ".zip":
                return True
            try:
                with open_regular(path, caps.limit(path.suffix), shown(path.name)) as file:
                    tail = b""
                    while left > 0 and (chunk := file.read(min(MIB, left))):
                        if word in tail + chunk:
                            return True
                        tail, left = chunk[-len(word):], left - len(chunk)
            except (Refused, OSError):
                continue
        return False

    def _files(self, caps: Caps):
        seen = 0
        stack = [(p, 0) for p in self.paths]
        while stack and seen < caps.folder_entries:
            path, level = stack.pop()
            seen += 1
            try:
                kind = kind_of(os.lstat(path).st_mode)
            except OSError:
                continue
            if kind == "file" and path.suffix.lower() in SUFFIXES:
                yield path
            elif kind == "directory" and level <= caps.folder_depth:
                try:
                    stack += [(Path(e.path), level + 1) for e in os.scandir(path)]
                except OSError:
                    continue


class Why(StrEnum):
    """Why an entry of the folder is not a submission (``skipped.<why>`` in the catalogue says it to the reader)."""

    HIDDEN = "hidden"  # its name starts with a dot: .DS_Store, .git, an editor's file
    OTHER_KIND = "other_kind"  # an LMS entry that is not a file hand-in (Moodle's online text, comments)
    NOT_A_HANDIN = "not_a_handin"  # a file of a kind no hand-in is (.txt, .pdf)


@dataclass(frozen=True)
class Skipped:
    name: str  # the entry as named in the folder, safe to show
    why: Why


@dataclass(frozen=True)
class Found:
    entries: list[Entry]
    not_submissions: list[Skipped] = field(default_factory=list)


def find(directory: Path, known: tuple[layouts.Layout, ...] = layouts.BUILT_IN) -> Found:
    """The students of ``directory`` (a batch folder), sorted by name; ``known``: the LMS layouts to recognise."""
    groups: dict[tuple[str, str], list[tuple[layouts.Named, os.DirEntry, bool]]] = {}
    plugin_only: dict[tuple[str, str], tuple[layouts.Named, os.DirEntry, bool]] = {}
    ignored: list[Skipped] = []
    for entry in sorted(os.scandir(directory), key=lambda e: os.fsencode(e.name)):
        try:
            kind = kind_of(entry.stat(follow_symlinks=False).st_mode)
        except OSError:
            kind = "special"
        folder = kind == "directory"
        named = layouts.parse(entry.name, folder, known)
        if entry.name.startswith(".") and not (folder and named.lms != "plain"):  # an LMS folder with an id is one
            ignored.append(Skipped(shown(entry.name), Why.HIDDEN))
            continue
        suffix = Path(named.inner or entry.name).suffix.lower()
        if named.not_submission or (kind == "file" and suffix not in SUFFIXES):
            ignored.append(Skipped(shown(entry.name), Why.OTHER_KIND if named.not_submission else Why.NOT_A_HANDIN))
            if named.lms != "plain":  # Moodle's online text: its student still gets a row, even with nothing else
                plugin_only.setdefault(named.key, (named, entry, folder))
            continue
        groups.setdefault(named.key, []).append((named, entry, folder))
    for key, member in plugin_only.items():  # the student handed in no file: a row that says so
        groups.setdefault(key, [member])
    entries = [_entry(members) for members in groups.values()]
    return Found(sorted(_told_apart(entries), key=lambda e: (e.student.lower(), e.student)), ignored)


def _entry(members: list[tuple[layouts.Named, os.DirEntry, bool]]) -> Entry:
    named = members[0][0]
    label = ", ".join(shown(e.name) + ("/" if folder else "") for _, e, folder in members)
    inner = tuple(n.inner for n, _, _ in members)
    if len(members) == 1 and members[0][2]:
        inner = ("",)  # a folder of its own, whatever the layout
    return Entry(shown(named.student), label, tuple(Path(e.path) for _, e, _ in members), inner, named.lms,
                 any(n.late for n, _, _ in members), folder=any(f for _, _, f in members),
                 lms_id=named.lms_id if named.lms != "plain" else "", display=shown(named.student),
                 identity=named.identity)


def _told_apart(entries: list[Entry]) -> list[Entry]:
    """Every student's name unique (case and Unicode normalisation ignored, ``name_key``): a name that collides
    gets its entry's name after it. Only the name shown changes: the identity (and so the cases) stays the
    entry's own. Names that look alike (``skeleton``) are flagged on each of the rows."""
    counts = Counter(name_key(e.student) for e in entries)
    out, taken = [], set()
    for e in entries:
        name = e.student if counts[name_key(e.student)] == 1 else f"{e.student} ({e.label})"
        unique, k = name, 2
        while name_key(unique) in taken:
            unique, k = f"{name} #{k}", k + 1
        taken.add(name_key(unique))
        out.append(replace(e, student=unique))
    alike: dict[str, list[Entry]] = {}
    for e in out:
        alike.setdefault(skeleton(e.display), []).append(e)
    flagged = []
    for e in out:
        others = [o.student for o in alike[skeleton(e.display)] if o.display != e.display]
        if mixed_scripts(e.display):
            others.insert(0, "mixed scripts")
        flagged.append(replace(e, lookalike="; ".join(others)))
    return flagged
