"""Canvas, all in one place: how its download names a student's files, and its gradebook import.

- The download ("Download Submissions"), read by the intake (``grader.intake.layouts`` builds its layout from
  ``FILE``): every file at the top, ``conceiçãoanabeatriz_LATE_9100111_240101_atencao.py``: the student's sortable
  name without spaces or punctuation (any Unicode letters), ``_LATE`` when late, the user id, the attachment id,
  the file's own name (``-1``, ``-2`` after a resubmitted file's name).
- ``Gradebook``: the gradebook import (Grades → Import): ``Student``, ``ID`` (the user id of the download's file
  names), ``SIS User ID``, ``SIS Login ID``, ``Section`` and one column named ``Assignment Name (assignment id)``,
  the score on ``out_of``.

Only Canvas's rows are written to Canvas's file; a row the grader could not grade gets no grade (never a 0 it did
not earn), and the caller says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.messages import Message
from grader.spreadsheet import csv_text
from mha.files import atomic_write_text

if TYPE_CHECKING:  # the exports' row; imported for its type alone, so that the intake reading FILE stays light
    from grader.lms.exports import Graded

LMS = "canvas"  # the gradebook's lms column for a row named by Canvas's download
FILE = re.compile(r"(?P<student>[^\W_]+)(?P<late>_LATE)?_(?P<id>\d+)_\d+_(?P<file>.+)", re.IGNORECASE)

COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
ASSIGNMENT = re.compile(r".+ \(\d+\)")  # "Atenção mascarada (123456)": Canvas matches the id in parentheses


def check_assignment(assignment: str) -> None:
    """Refuse a column that is not Canvas's "Name (id)": Canvas would import nothing into it."""
    if not ASSIGNMENT.fullmatch(assignment):
        raise Message.error("usage.canvas_assignment", given=assignment)


@dataclass(frozen=True)
class Gradebook:
    """Canvas's gradebook import at ``path``; ``assignment`` is the column Canvas names "Name (id)"."""

    path: Path
    assignment: str

    def __post_init__(self):
        check_assignment(self.assignment)

    def write(self, rows: list[Graded], out_of: float) -> int:
        """Write the import CSV; returns the number of students in it."""
        lines = [[*COLUMNS, self.assignment]]
        for row in rows:
            if row.lms != LMS or row.result is None:
                continue
            lines.append([row.lms_name, row.lms_id, "", "", "", row.grade(out_of)])
        atomic_write_text(self.path, csv_text(lines, "\r\n"))
        return len(lines) - 1
