"""Moodle, all in one place: how its download names a student, its grading worksheet, its feedback-files zip.

- The download ("Download all submissions"), read by the intake (``grader.intake.layouts`` builds its layout
  from ``FOLDER`` and ``FILE``): Moodle 3.x, in folders, ``Full Name_1234567_assignsubmission_file_/``; Moodle 4.1
  and later ``Full Name_1234567_assignsubmission_file/`` (no trailing underscore); with "download submissions in
  folders" off, the files at the top, ``Full Name_1234567_assignsubmission_file_atencao.py``. ``1234567`` is the
  participant id the grading worksheet shows as "Participant 1234567"; an entry of another plugin than
  ``SUBMISSION_PLUGIN`` (online text, comments, ...) is not a file hand-in.
- ``Worksheet``: the grading worksheet (Assignment → "Upload grading worksheet"). Moodle's importer
  (assignfeedback_offline) finds its columns by their names in the language the instructor's Moodle shows:
  ``Identifier``, ``Grade``, ``Last modified (grade)`` are required, ``Feedback comments`` is read when feedback
  comments are on; the identifier is Moodle's "hiddenuser" string followed by the participant id of the download's
  folder names (``PARTICIPANT``). The grade is on ``out_of`` (Moodle skips a grade above the assignment's
  maximum), and so is the comment's total, beside the mistakes' titles or, for a 0 not earned by the tests, the
  reason.
- ``FeedbackZip``: "Upload multiple feedback files in a zip". Moodle's importer (assignfeedback_file) splits each
  folder name on "_" into at most five parts and needs the participant id second and a plugin third and fourth:
  the download's own 3.x folder name (``folder_name``), ``Full Name_1874501_assignsubmission_file_/feedback.html``
  (underscores in the name are written as spaces, as they would otherwise shift the id).

Only Moodle's rows are written to Moodle's files; a row the grader could not grade gets no grade (never a 0 it
did not earn), and the caller says so.
"""

from __future__ import annotations

import io
import re
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.spreadsheet import csv_text
from mha.files import atomic_write_bytes, atomic_write_text

if TYPE_CHECKING:  # the exports' row; imported for its type alone, so that the intake reading LAYOUT stays light
    from grader.lms.exports import Graded

LMS = "moodle"  # the gradebook's lms column for a row named by Moodle's download
SUBMISSION_PLUGIN = "assignsubmission_file"  # Moodle's "File submissions"; every other plugin is not a file hand-in

# "Full Name_1234567_<plugin>", the plugin being a submission's or a feedback's (assignsubmission_onlinetext, ...).
_PREFIX = r"(?P<student>.+?)_(?P<id>\d+)_(?P<plugin>assign(?:submission|feedback)_[a-z0-9]+)"
FOLDER = re.compile(_PREFIX + "_?")  # 3.x ends the folder's name with "_", 4.1 and later do not
FILE = re.compile(_PREFIX + r"_(?P<file>.+)")  # files at the top carry the file's own name after the prefix

# Moodle's column names (mod/assign's language strings) in en and pt_br, in the order Moodle writes them.
COLUMNS = {
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
PARTICIPANT = {"en": "Participant ", "pt": "Participante"}
STATUS = {"en": "Submitted for grading", "pt": "Enviado para avaliação"}
YES = {"en": "Yes", "pt": "Sim"}
FEEDBACK_FILE = "feedback.html"


def folder_name(name: str, participant_id: str) -> str:
    """The folder of a participant as Moodle 3.x's download names it (``FOLDER`` reads it back), which is what
    its feedback-zip importer maps to that participant."""
    shown = name.replace("_", " ").replace("/", " ").strip() or "student"
    return f"{shown}_{participant_id}_{SUBMISSION_PLUGIN}_"


@dataclass(frozen=True)
class Worksheet:
    """Moodle's grading worksheet at ``path``, its columns in ``lang`` (the language the instructor's Moodle
    shows)."""

    path: Path
    lang: str

    def write(self, rows: list[Graded], out_of: float) -> int:
        """Write the worksheet; returns the number of students in it."""
        lang = self.lang
        modified = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())  # read by PHP's strtotime
        lines = [list(COLUMNS[lang])]
        for row in rows:
            if row.lms != LMS or row.result is None:
                continue
            lines.append([PARTICIPANT[lang] + row.lms_id, row.lms_name, "", STATUS[lang], row.grade(out_of),
                          f"{out_of:g}", YES[lang], "", modified, row.comment(out_of)])
        # a BOM: spreadsheets then read the accents as UTF-8
        atomic_write_text(self.path, "\ufeff" + csv_text(lines, "\r\n"))
        return len(lines) - 1


@dataclass(frozen=True)
class FeedbackZip:
    """The feedback pages at ``path``, in the folders Moodle's "Upload multiple feedback files in a zip"
    accepts."""

    path: Path

    def write(self, rows: list[Graded], out_of: float) -> int:
        """Write the zip; returns the number of pages in it (``out_of``: the pages show the rubric's total)."""
        buffer, count = io.BytesIO(), 0
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for row in rows:
                if row.lms != LMS or row.result is None:
                    continue
                info = zipfile.ZipInfo(f"{folder_name(row.lms_name, row.lms_id)}/{FEEDBACK_FILE}", time.gmtime()[:6])
                info.flag_bits |= 0x800  # the name is UTF-8
                zf.writestr(info, row.page(row.lms_name), zipfile.ZIP_DEFLATED)
                count += 1
        atomic_write_bytes(self.path, buffer.getvalue())
        return count
