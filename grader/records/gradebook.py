"""The batch's CSV gradebook (``grades.csv``): its columns, its writer (``line``, ``text``) and its validating
reader (``read``) side by side.

Written by the batch (``grader.batch``), one line per student; read back by the class page
(``grader.classpage.gradebook``). Every cell is written through ``grader.spreadsheet.cell`` (no spreadsheet runs
one as a formula) and read back through ``uncell``, so what is read is what was written. The file is read as data
from a file an instructor may have edited: a missing column or a number that is none is a ValueError naming it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from grader.functions.contract import FUNCTIONS
from grader.grade_status import GradeStatus
from grader.lms.identity import LMS_COLUMNS, lms_columns
from grader.module.contract import MODULE_NAMES
from grader.spreadsheet import csv_text, uncell

# the gradebook's, in order; status: a GradeStatus (graded | import failed | refused | grader error), why in reason
COLUMNS = ["student", "total", "max_total", *FUNCTIONS, *MODULE_NAMES, "mistakes", "status", "reason", "late",
           "error", *LMS_COLUMNS]
NEEDED = ("student", "total", "max_total", "mistakes", "status", "reason", "late")  # what the reader needs


def line(student: str, result, max_score: float, error: str = "", late: bool = False, entry=None) -> dict:
    """One student's line, by column: ``result`` a ``grader.results.GradeResult`` (None where the grader failed on
    the hand-in, ``error`` saying how), ``max_score`` the batch's, for a line the grader could not grade (a graded
    one has its own: question 2's without build_model is out of fewer points than question 1's seven functions),
    ``entry`` the ``grader.intake.finding.Entry`` (the LMS columns). The values as they are: ``text`` makes every
    cell safe."""
    r = result
    row = {"student": student, "total": float(r.score if r else 0.0),
           "max_total": float(r.max_score if r else max_score)}
    points = r.points_by_function() if r else {}
    row.update({f: float(points.get(f, 0.0)) for f in (*FUNCTIONS, *MODULE_NAMES)})
    row["mistakes"] = ";".join(r.mistakes) if r else ""
    row["status"] = r.status if r else GradeStatus.GRADER_ERROR
    row["reason"] = r.reason if r else error
    row["late"] = late
    row["error"] = error
    row.update(lms_columns(entry))
    return row


def text(lines: list[dict]) -> str:
    """The gradebook CSV: ``COLUMNS``, then each line's cells in that order, every cell through
    ``grader.spreadsheet.cell``."""
    return csv_text([COLUMNS, *([row[c] for c in COLUMNS] for row in lines)])


@dataclass(frozen=True)
class Line:
    """One student's line as read back."""

    student: str
    total: float
    max_total: float
    mistakes: tuple[str, ...]
    status: str  # a GradeStatus's value as the file holds it (graded | import failed | refused | grader error)
    reason: str
    late: bool
    points: dict[str, float]  # function -> points, for every function column the file has
    lookalike: str = ""  # the students whose names look the same as this one's ("" in a file without the column)


def _number(cell: str, column: str, where: str) -> float:
    try:
        return float(cell)
    except ValueError:
        raise ValueError(f"{where}: column {column} holds {cell!r}, not a number") from None


def read(csv_path: Path) -> list[Line]:
    """Every line of the gradebook at ``csv_path``, in its order."""
    with csv_path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{csv_path} is not a gradebook of this grader: no column {', '.join(missing)}")
        functions = [c for c in reader.fieldnames if c not in (*NEEDED, "error", *LMS_COLUMNS)]
        rows = [{column: uncell(cell or "") for column, cell in row.items() if column is not None}
                for row in reader]
    lines = []
    for number, row in enumerate(rows, start=2):
        where = f"{csv_path}, line {number}"
        lines.append(Line(
            student=row["student"], total=_number(row["total"], "total", where),
            max_total=_number(row["max_total"], "max_total", where),
            mistakes=tuple(m for m in row["mistakes"].split(";") if m), status=row["status"], reason=row["reason"],
            late=row["late"].strip().lower() == "true",
            points={f: _number(row[f] or "0", f, where) for f in functions}, lookalike=row.get("lookalike", "")))
    return lines
