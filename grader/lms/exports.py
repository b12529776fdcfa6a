"""Grades and feedback back into the LMS, from one batch run: each format written from the LMS's own importer.

- ``moodle_worksheet``: Moodle's grading worksheet (Assignment → "Upload grading worksheet"). Moodle's importer
  (assignfeedback_offline) finds its columns by their names in the language the instructor's Moodle shows:
  ``Identifier``, ``Grade``, ``Last modified (grade)`` are required, ``Feedback comments`` is read when feedback
  comments are on; the identifier is Moodle's "hiddenuser" string followed by the participant id of the download's
  folder names (``MOODLE_PARTICIPANT``). The grade is on ``out_of`` (Moodle skips a grade above the assignment's
  maximum), and so is the comment's total, beside the mistakes' titles or, for a 0 not earned by the tests, the
  reason.
- ``moodle_feedback_zip``: "Upload multiple feedback files in a zip". Moodle's importer (assignfeedback_file)
  splits each folder name on "_" into at most five parts and needs the participant id second and a plugin
  third and fourth: ``Full Name_1874501_assignsubmission_file_/feedback.html`` (underscores in the name are
  written as spaces, as they would otherwise shift the id).
- ``canvas_gradebook``: Canvas's gradebook import (Grades → Import): ``Student``, ``ID`` (the user id of the
  download's file names), ``SIS User ID``, ``SIS Login ID``, ``Section`` and one column named
  ``Assignment Name (assignment id)``, the score on ``out_of``.
- ``feedback_folder``: the same pages, one per student, for any other LMS.

Only the rows the LMS knows are written to its files (a Moodle row to Moodle's); a row the grader could not
grade gets no grade (never a 0 it did not earn), and the caller says so.
"""

from __future__ import annotations

import io
import re
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from grader.lms.feedback_page import page_name, render, summary
from grader.results import GradeResult
from grader.spreadsheet import csv_text
from mha.files import atomic_write_bytes, atomic_write_text

# Moodle's column names (mod/assign's language strings) in en and pt_br, in the order Moodle writes them.
MOODLE_COLUMNS = {
    "en": ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade", "Grade can be changed",
           "Last modified (submission)", "Last modified (grade)", "Feedback comments"),
    "pt": ("Identificador", "Nome completo", "Endereço de email", "Status", "Nota", "Nota máxima",
           "A nota pode ser alterada", "Última modificação (envio)", "Última modificação (nota)",
           "Comentários de feedback"),
}
# get_string('hiddenuser', 'assign') in Moodle's en and pt_br language packs, exactly: en ends in a space, pt_br does
# not (its 3.0 and 3.11 packs). The worksheet's identifier is that string followed by the participant id, as
# Moodle's own gradingtable writes it ("Participant 1874501", "Participante1874501"), and its importer takes the
# id as what follows strlen() of that string.
MOODLE_PARTICIPANT = {"en": "Participant ", "pt": "Participante"}
MOODLE_STATUS = {"en": "Submitted for grading", "pt": "Enviado para avaliação"}
MOODLE_YES = {"en": "Yes", "pt": "Sim"}
MOODLE_FEEDBACK_FILE = "feedback.html"
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_ASSIGNMENT = re.compile(r".+ \(\d+\)")  # "Atenção mascarada (123456)": Canvas matches the id in parentheses


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


def from_rows(rows) -> list[Graded]:
    """The exports' view of a batch's rows (``grader.batch.Row``)."""
    out = []
    for r in rows:
        entry = r.entry
        lms, lms_id = (entry.layout, entry.lms_id) if entry is not None else ("plain", "")
        out.append(Graded(r.student, lms, lms_id, entry.display if entry is not None else r.student, r.stem,
                          r.result))
    return out


def moodle_worksheet(rows: list[Graded], path: Path, out_of: float, lang: str) -> int:
    """Write Moodle's grading worksheet; returns the number of students in it."""
    columns = MOODLE_COLUMNS[lang]
    modified = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())  # read by PHP's strtotime
    lines = [list(columns)]
    for row in rows:
        if row.lms != "moodle" or row.result is None:
            continue
        lines.append([MOODLE_PARTICIPANT[lang] + row.lms_id, row.lms_name, "", MOODLE_STATUS[lang],
                      row.grade(out_of), f"{out_of:g}", MOODLE_YES[lang], "", modified, summary(row.result, out_of)])
    atomic_write_text(path, "\ufeff" + csv_text(lines, "\r\n"))  # a BOM: spreadsheets then read the accents as UTF-8
    return len(lines) - 1


def moodle_folder(row: Graded) -> str:
    """The folder Moodle's feedback importer maps to this participant (as its download names it)."""
    name = row.lms_name.replace("_", " ").replace("/", " ").strip() or "student"
    return f"{name}_{row.lms_id}_assignsubmission_file_"


def moodle_feedback_zip(rows: list[Graded], path: Path) -> int:
    """Write the feedback pages in the folders Moodle's "Upload multiple feedback files in a zip" accepts."""
    buffer, count = io.BytesIO(), 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for row in rows:
            if row.lms != "moodle" or row.result is None:
                continue
            info = zipfile.ZipInfo(f"{moodle_folder(row)}/{MOODLE_FEEDBACK_FILE}", time.gmtime()[:6])
            info.flag_bits |= 0x800  # the name is UTF-8
            zf.writestr(info, render(row.result, row.lms_name), zipfile.ZIP_DEFLATED)
            count += 1
    atomic_write_bytes(path, buffer.getvalue())
    return count


def canvas_gradebook(rows: list[Graded], path: Path, out_of: float, assignment: str) -> int:
    """Write Canvas's gradebook import CSV; ``assignment`` is the column Canvas names "Name (id)"."""
    if not CANVAS_ASSIGNMENT.fullmatch(assignment):
        raise ValueError(f"--canvas-assignment {assignment!r} must be the assignment's column as Canvas names it, "
                         "'Name (id)', e.g. 'Atenção mascarada (123456)' (Grades → Export shows it)")
    lines = [[*CANVAS_COLUMNS, assignment]]
    for row in rows:
        if row.lms != "canvas" or row.result is None:
            continue
        lines.append([row.lms_name, row.lms_id, "", "", "", row.grade(out_of)])
    atomic_write_text(path, csv_text(lines, "\r\n"))
    return len(lines) - 1


def feedback_folder(rows: list[Graded], folder: Path) -> int:
    """One page per graded student, ``<stem>.html``, for any LMS (or e-mail)."""
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for row in rows:
        if row.result is not None:
            atomic_write_text(folder / page_name(row.stem), render(row.result, row.student))
            count += 1
    return count
