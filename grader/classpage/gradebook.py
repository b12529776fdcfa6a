"""A saved batch read back: the CSV gradebook's rows and, where the batch wrote one, each student's results JSON.

Both are read by their records' own readers, beside their writers: the gradebook by
``grader.records.gradebook.read``, the results JSON by ``grader.records.results_json.read``; a missing column or
an unreadable file is a ValueError naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.intake.names import file_stem, name_key
from grader.records import gradebook, results_json
from grader.records.results_json import TestRow


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


def read(csv_path: Path, results_dir: Path | None, stems: dict[str, str] | None = None) -> list[Student]:
    """Every row of the gradebook, in its order, with its results JSON when ``results_dir`` holds one.

    ``stems`` (from the run record) names each student's results file; without it the batch's naming is
    repeated over the CSV's rows."""
    students, taken = [], set()
    for line in gradebook.read(csv_path):
        name = line.student
        stem = (stems or {}).get(name) or file_stem(name, taken)
        taken.add(name_key(stem))  # a stem from the run record is taken too
        results = results_dir / f"{stem}.json" if results_dir is not None else None
        found = results_json.read(results) if results is not None and results.is_file() else None
        students.append(Student(
            name=name, total=line.total, max_total=line.max_total, status=line.status, reason=line.reason,
            late=line.late, mistakes=line.mistakes, points=line.points, tests=found.tests if found else (),
            timed_out=found.timed_out if found else False, stem=stem, lookalike=line.lookalike,
            language=found.language if found else "python"))
    return students
