"""The download layouts of the learning-management systems this course uses, and the student each names.

- Moodle (assignment, "Download all submissions"): one folder per student,
  ``Full Name_1234567_assignsubmission_file_/`` holding the files as handed in; older versions put the
  files at the top, ``Full Name_1234567_assignsubmission_file_atencao.py``. ``onlinetext`` entries are text
  typed into Moodle, not files.
- Canvas ("Download Submissions"): every file at the top, ``lastnamefirstname_12345_67890_atencao.py``
  (student, user id, submission id, the file's own name), with ``_LATE`` after the name when late; Canvas
  adds ``-1``, ``-2`` to a resubmitted file's name.

A name in neither layout is the student's name as it stands (a file's without its suffix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MOODLE = re.compile(r"^(?P<who>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>file|onlinetext)_(?P<inner>.*)$")
CANVAS = re.compile(r"^(?P<who>[a-z]+)(?P<late>_late)?_(?P<id>\d+)_(?P<sub>\d+)_(?P<inner>.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Named:
    """What an entry's name says: whose it is, the file's own name inside it (if any), the layout."""

    key: tuple[str, str]  # entries with the same key belong to the same student
    student: str
    inner: str  # the file's own name ("" for a folder of its own)
    layout: str  # moodle | canvas | plain
    late: bool = False
    text_only: bool = False  # Moodle's online text: not a file hand-in


def parse(name: str, is_folder: bool) -> Named:
    moodle = MOODLE.match(name)
    if moodle:
        who = moodle["who"].strip()
        return Named(("moodle", moodle["id"]), who, moodle["inner"], "moodle",
                     text_only=moodle["plugin"] == "onlinetext")
    canvas = None if is_folder else CANVAS.match(name)
    if canvas:
        return Named(("canvas", canvas["id"]), canvas["who"], canvas["inner"], "canvas", late=bool(canvas["late"]))
    stem = name
    if not is_folder:
        for suffix in (".py", ".ipynb", ".zip", ".r", ".rmd", ".qmd"):
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                stem = name[: -len(suffix)]
    return Named(("plain", name), stem, "", "plain")
