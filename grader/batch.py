"""Grade a directory of submissions in parallel into a pandas CSV gradebook and one results JSON each.

Each submission runs in its own sandboxed child, so a hostile one can at worst get itself a 0; a
failure of the grader on one submission is recorded in that student's row and the batch goes on.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from grader import launch
from grader.cases import FUNCTIONS
from grader.grade import GradeConfig, grade
from grader.messages import CATALOG, text
from grader.module.contract import MODULE_NAMES
from grader.results import NAMED_MISTAKES, GradeResult
from grader.sandbox import printable
from mha.files import atomic_write_text, write_json

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet would run a cell that starts so
COLUMNS = ["student", "total", "max_total", *FUNCTIONS, *MODULE_NAMES, "mistakes", "error"]  # the gradebook's, in order


def csv_cell(text: str) -> str:
    """A text cell no spreadsheet will read as a formula, with no control characters."""
    text = printable(text)
    return "'" + text if text.startswith(FORMULA_START) else text


@dataclass(frozen=True)
class Row:
    student: str
    result: GradeResult | None
    error: str = ""  # set when the grader itself failed on this submission

    def to_dict(self, max_score: float) -> dict:
        r = self.result
        row = {"student": csv_cell(self.student), "total": r.score if r else 0.0, "max_total": max_score}
        points = r.points_by_function() if r else {}
        row.update({f: points.get(f, 0.0) for f in (*FUNCTIONS, *MODULE_NAMES)})
        row["mistakes"] = ";".join(r.mistakes) if r else ""
        row["error"] = csv_cell(self.error)
        return row


def find_submissions(directory: Path) -> list[tuple[str, Path]]:
    """Every DIR/*.py (student = file stem) and DIR/*/student.py (student = folder name)."""
    found: dict[str, Path] = {}
    paths = [(p.stem, p) for p in sorted(directory.glob("*.py"))]
    paths += [(p.parent.name, p) for p in sorted(directory.glob("*/student.py"))]
    for name, path in paths:
        name = printable(name)
        unique, k = name, 2
        while unique in found:
            unique, k = f"{name}-{k}", k + 1
        found[unique] = path
    return sorted(found.items())


def grade_batch(
    directory: Path, csv_path: Path, results_dir: Path, jobs: int, config: GradeConfig
) -> tuple[list[Row], str]:
    """Grade everything; returns the rows and a printable summary."""
    if not (isinstance(jobs, int) and jobs >= 1):
        raise CATALOG.error("usage.jobs", jobs=jobs)
    start = time.perf_counter()
    submissions = find_submissions(directory)
    rows: list[Row] = []
    jobs = jobs_for(config.isolation, jobs)
    spans: dict[str, tuple[float, float]] = {}

    spawner = launch.launcher(config.isolation, [p for _, p in submissions])

    def one(student: str, path: Path) -> Row:
        began = time.monotonic()
        try:
            return graded(student, path)
        finally:
            spans[student] = (began, time.monotonic())

    def graded(student: str, path: Path) -> Row:
        try:
            try:
                result = grade(path, config, student=student, spawner=spawner)
            except launch.LaunchError:  # the server died under this student (not their doing): once more
                result = grade(path, config, student=student, spawner=spawner)
        except Exception as exc:  # noqa: BLE001 - one submission never costs the others their grades
            return Row(student, None, f"{type(exc).__name__}: {exc}")
        write_json(results_dir / f"{student}.json", result.to_gradescope())
        return Row(student, result)

    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(one, s, p) for s, p in submissions]
            with progress(len(futures), "grading") as bar:
                for future in as_completed(futures):
                    rows.append(future.result())
                    bar.advance()
        # Time limits are wall clock: a submission that ran out of time while a neighbour was busy may only
        # have been starved of CPU by it (a hostile neighbour's spinning processes). It is graded once more,
        # alone, after everyone else's processes are gone, and that grade counts; never a third time.
        paths = dict(submissions)
        again = to_grade_again(rows, spans)
        if again:
            rows = [r for r in rows if r.student not in again]
            with progress(len(again), "grading alone") as bar:
                for student in again:
                    rows.append(graded(student, paths[student]))
                    bar.advance()
    finally:
        spawner.close()
    rows.sort(key=lambda r: r.student)
    max_score = max((r.result.max_score for r in rows if r.result), default=0.0)
    frame = pd.DataFrame([r.to_dict(max_score) for r in rows], columns=COLUMNS)
    atomic_write_text(csv_path, frame.to_csv(index=False))
    return rows, summary(rows, max_score, time.perf_counter() - start, config.lang, again)


def jobs_for(isolation: str, jobs: int) -> int:
    """How many submissions run at once: one in the uid mode, where every submission shares the disk,
    /tmp and the kernel's per-machine limits with the others and only grading them one at a time (each
    cleaned up before the next) keeps one from costing another its grade."""
    return 1 if isolation == "uid" else jobs


def to_grade_again(rows: list[Row], spans: dict[str, tuple[float, float]]) -> list[str]:
    """Those that ran out of time while another submission was being graded (their spans overlap)."""
    def had_a_neighbour(student: str) -> bool:
        began, ended = spans.get(student, (0.0, 0.0))
        return any(s != student and b < ended and e > began for s, (b, e) in spans.items())

    return sorted(r.student for r in rows
                  if r.result is not None and r.result.ran_out_of_time and had_a_neighbour(r.student))


class progress:  # noqa: N801 - used as a context manager, like tqdm itself
    """A progress bar that says how many submissions are left."""

    def __init__(self, total: int, desc: str):
        self.left = total
        self.bar = tqdm(total=total, desc=desc, unit="submission", disable=None)
        self.bar.set_postfix_str(f"{total} left")

    def advance(self) -> None:
        self.left -= 1
        self.bar.set_postfix_str(f"{self.left} left", refresh=False)
        self.bar.update(1)

    def __enter__(self) -> progress:
        return self

    def __exit__(self, *exc) -> None:
        self.bar.close()


def summary(rows: list[Row], max_score: float, seconds: float, lang: str, again: list[str] = ()) -> str:
    totals = [r.result.score if r.result else 0.0 for r in rows]
    mean = sum(totals) / max(len(totals), 1)
    lines = [text(lang, "batch.summary", count=len(rows), seconds=seconds, mean=mean, max_score=max_score)]
    if again:
        lines.append(text(lang, "batch.again", count=len(again), students=", ".join(again)))
    for r in rows:
        if r.error:
            lines.append(text(lang, "batch.failed", student=r.student, error=r.error))
    counts = Counter(m for r in rows if r.result for m in r.result.mistakes)
    if counts:
        lines.append(text(lang, "batch.mistakes"))
        lines += [f"  {m:<27} {counts[m]}" for m in NAMED_MISTAKES if counts[m]]
    else:
        lines.append(text(lang, "batch.no_mistakes"))
    return "\n".join(lines)
