"""Grades and feedback back into the LMS, from one batch run: what every export is, and the one for any LMS.

An export is an object that says what it needs when it is made (a path, the worksheet's language, Canvas's
assignment column: plain values) and writes its file from the batch's rows with ``write(rows, out_of)``, returning
how many students it holds (``Export``); the class run loops over the ones asked for. Each LMS's own are in its
module, beside how its download names a student: ``grader.lms.moodle`` (``Worksheet``, ``FeedbackZip``) and
``grader.lms.canvas`` (``Gradebook``), each format written from the LMS's own importer. Here:

- ``Graded``: what the exports need of one gradebook row, and ``from_rows`` to make them (the LMS columns through
  ``grader.lms.identity``, the gradebook's own mapping);
- ``FeedbackFolder``: the feedback pages, one per student, for any LMS (or e-mail).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from grader.lms.feedback_page import page_name, render, summary
from grader.lms.identity import lms_columns
from grader.results import GradeResult
from mha.files import atomic_write_text


@dataclass(frozen=True)
class Graded:
    """What the exports need of one gradebook row."""

    student: str  # the name shown in the gradebook (unique in the batch)
    lms: str  # moodle | canvas | another layout's name | plain
    lms_id: str
    lms_name: str  # the name as the LMS spells it
    stem: str  # the student's file stem (results JSON, feedback page)
    result: GradeResult | None  # None: the grader failed on this student

    def grade(self, out_of: float) -> str:
        """The total on ``out_of``, two decimals at most, with a point (Moodle and Canvas read it in any language);
        never above ``out_of`` (Moodle skips such a grade), even with question 2's extra points."""
        if self.result is None or self.result.max_score <= 0:
            return ""
        return f"{self.result.on_scale(out_of):g}"

    def comment(self, out_of: float) -> str:
        """The gradebook comment: the total on ``out_of``, the mistakes' titles, or why it was not graded."""
        return summary(self.result, out_of)

    def page(self, name: str) -> str:
        """The student's feedback page, titled with ``name`` (as the LMS or the gradebook spells it)."""
        return render(self.result, name)


def from_rows(rows) -> list[Graded]:
    """The exports' view of a batch's rows (``grader.batch.Row``)."""
    out = []
    for r in rows:
        who = lms_columns(r.entry)
        out.append(Graded(r.student, who["lms"], who["lms_id"], who["lms_name"], r.stem, r.result))
    return out


class Export(Protocol):
    """One file (or folder) back to an LMS, made with what it needs, written from the batch's rows."""

    path: Path

    def write(self, rows: list[Graded], out_of: float) -> int:
        """Write ``path`` from ``rows`` with grades on ``out_of``; returns the number of students it holds."""
        ...


@dataclass(frozen=True)
class FeedbackFolder:
    """One page per graded student in the folder ``path``, ``<stem>.html``, for any LMS (or e-mail)."""

    path: Path

    def write(self, rows: list[Graded], out_of: float) -> int:
        """Write the pages (``out_of`` unused: a page shows the rubric's total); returns how many."""
        self.path.mkdir(parents=True, exist_ok=True)
        count = 0
        for row in rows:
            if row.result is not None:
                atomic_write_text(self.path / page_name(row.stem), row.page(row.student))
                count += 1
        return count
