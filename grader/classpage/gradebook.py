"""A saved batch read back: the CSV gradebook's rows and, where the batch wrote one, each student's results JSON.

The CSV is the batch's (``grader.batch.COLUMNS``), every cell read back through ``grader.spreadsheet.uncell``
as it was written through ``cell``; the results JSON is Gradescope's results.json that
``GradeResult.to_gradescope`` writes. Both are read as data from a file an instructor may have edited: a
missing column or an unreadable file is a ValueError naming it.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from grader.intake.names import file_stem, name_key
from grader.lms.identity import LMS_COLUMNS
from grader.spreadsheet import uncell

NEEDED = ("student", "total", "max_total", "mistakes", "status", "reason", "late")


@dataclass(frozen=True)
class TestRow:
    function: str
    group: str
    name: str  # as the student read it, e.g. "softmax: hidden cases"
    passed: bool
    output: str
    mistakes: tuple[str, ...]


@dataclass(frozen=True)
class Student:
    name: str
    total: float
    max_total: float
    status: str  # graded | import failed | refused | grader error
    reason: str
    late: bool
    mistakes: tuple[str, ...]
    points: dict[str, float]  # function -> points, from the CSV
    tests: tuple[TestRow, ...] = ()  # from the results JSON; () when there is none
    timed_out: bool = False
    stem: str = ""  # the file stem of the results JSON (and of the feedback page)
    lookalike: str = ""  # the students whose names look the same as this one's (the gradebook's lookalike column)
    language: str = "python"  # the hand-in's (python | r), from the results JSON: the notation its reader reads


def _number(cell: str, column: str, where: str) -> float:
    try:
        return float(cell)
    except ValueError:
        raise ValueError(f"{where}: column {column} holds {cell!r}, not a number") from None


def _tests(path: Path) -> tuple[tuple[TestRow, ...], bool, str]:
    """The tests of one results JSON, whether some call or the import ran out of time, and the hand-in's
    language."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        tests = tuple(TestRow(t["extra_data"]["function"], t["extra_data"]["group"], t["name"],
                              t["status"] == "passed", t.get("output", ""), tuple(t["extra_data"].get("mistakes", ())))
                      for t in raw.get("tests", []))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a results JSON the batch wrote ({type(exc).__name__}: {exc})") from None
    extra = raw.get("extra_data", {})
    language = extra.get("language") if extra.get("language") in ("python", "r") else "python"
    return tests, bool(extra.get("timed_out", False)), language


def read(csv_path: Path, results_dir: Path | None, stems: dict[str, str] | None = None) -> list[Student]:
    """Every row of the gradebook, in its order, with its results JSON when ``results_dir`` holds one.

    ``stems`` (from the run record) names each student's results file; without it the batch's naming is
    repeated over the CSV's rows."""
    with csv_path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{csv_path} is not a gradebook of this grader: no column {', '.join(missing)}")
        functions = [c for c in reader.fieldnames if c not in (*NEEDED, "error", *LMS_COLUMNS)]
        rows = [{column: uncell(cell or "") for column, cell in row.items() if column is not None}
                for row in reader]
    students, taken = [], set()
    for line, row in enumerate(rows, start=2):
        where = f"{csv_path}, line {line}"
        name = row["student"]
        stem = (stems or {}).get(name) or file_stem(name, taken)
        taken.add(name_key(stem))  # a stem from the run record is taken too
        results = results_dir / f"{stem}.json" if results_dir is not None else None
        found = results is not None and results.is_file()
        tests, timed_out, language = _tests(results) if found else ((), False, "python")
        students.append(Student(
            name=name, total=_number(row["total"], "total", where),
            max_total=_number(row["max_total"], "max_total", where),
            status=row["status"], reason=row["reason"], late=row["late"].strip().lower() == "true",
            mistakes=tuple(m for m in row["mistakes"].split(";") if m),
            points={f: _number(row[f] or "0", f, where) for f in functions}, tests=tests, timed_out=timed_out,
            stem=stem, lookalike=row.get("lookalike", ""), language=language))
    return students
