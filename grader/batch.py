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

from tqdm import tqdm

from grader import rubric as rubric_mod
from grader.classpage import record as run_record
from grader.functions.contract import FUNCTIONS
from grader.grade import GradeConfig, failed, grade
from grader.intake import Caps, HandIn, Refusal
from grader.intake.finding import Entry, Skipped, Why, find
from grader.intake.handin import SUFFIXES
from grader.intake.names import file_stem
from grader.lms.identity import LMS_COLUMNS, lms_columns
from grader.messages import Message, mistake_named, status_word, text
from grader.module.contract import MODULE_NAMES
from grader.results import NAMED_MISTAKES, GradeResult
from grader.sandbox import launch
from grader.spreadsheet import csv_text
from mha.files import atomic_write_text, write_json

# the gradebook's, in order; status: graded | import failed | refused | grader error, and why in reason
COLUMNS = ["student", "total", "max_total", *FUNCTIONS, *MODULE_NAMES, "mistakes", "status", "reason", "late",
           "error", *LMS_COLUMNS]


@dataclass(frozen=True)
class Row:
    student: str
    result: GradeResult | None
    error: str = ""  # set when the grader itself failed on this submission
    late: bool = False  # the LMS marked the hand-in late (Canvas)
    entry: Entry | None = None  # where the row came from: the LMS, the student's id there, their name as spelled
    stem: str = ""  # the student's file stem (results JSON, feedback page)

    def to_dict(self, max_score: float) -> dict:
        """``max_score`` is the batch's, for a row the grader could not grade; a graded row has its own (question 2's
        without build_model is out of fewer points than question 1's seven functions). The values as they are:
        the gradebook's writer (``grader.spreadsheet.csv_text``) makes every cell safe."""
        r = self.result
        row = {"student": self.student, "total": float(r.score if r else 0.0),
               "max_total": float(r.max_score if r else max_score)}
        points = r.points_by_function() if r else {}
        row.update({f: float(points.get(f, 0.0)) for f in (*FUNCTIONS, *MODULE_NAMES)})
        row["mistakes"] = ";".join(r.mistakes) if r else ""
        row["status"] = r.status if r else "grader error"
        row["reason"] = r.reason if r else self.error
        row["late"] = self.late
        row["error"] = self.error
        row.update(lms_columns(self.entry))
        return row


def gradebook_text(rows: list[Row], max_score: float) -> str:
    """The gradebook CSV: ``COLUMNS``, then a line per row, every cell through ``grader.spreadsheet.cell`` (read back
    by ``grader.classpage.gradebook.read``)."""
    return csv_text([COLUMNS, *([row[c] for c in COLUMNS] for row in (r.to_dict(max_score) for r in rows))])


def find_submissions(directory: Path) -> list[Entry]:
    """Every student of a batch folder (``grader.intake.finding``): files and folders, each one row."""
    return find(directory).entries


def _open(entry: Entry, caps: Caps, seconds: float) -> HandIn | Refusal | str:
    """What the intake makes of one student's entry, in its bounded helper process, within ``seconds`` of the
    student's budget; a grader failure as text (that row alone pays for it)."""
    try:
        return entry.open(caps, seconds)
    except Exception as exc:  # noqa: BLE001 - one submission never costs the others their grades
        return f"{type(exc).__name__}: {exc}"


def grade_batch(
    directory: Path, csv_path: Path, results_dir: Path, jobs: int, config: GradeConfig, known=None, *,
    out_of: float | None = None, submissions: Path | None = None, feedback_dir: Path | None = None,
) -> tuple[list[Row], str]:
    """Grade everything; returns the rows and a printable summary. ``known``: the LMS layouts to recognise
    (default: the built-in ones, ``grader.intake.layouts``); ``out_of``: the LMS's scale the summary's mean is
    on. The run record names ``submissions`` as where the hand-ins are (the zip as downloaded, where
    ``directory`` is the grader's own unpacked copy of it) and ``feedback_dir`` as where the per-student pages
    go, for the class page."""
    if not (isinstance(jobs, int) and jobs >= 1):
        raise Message.error("usage.jobs", jobs=jobs)
    start = time.perf_counter()
    found = find(directory) if known is None else find(directory, known)
    entries = {e.student: e for e in found.entries}
    handins: dict[str, HandIn | Refusal | str] = {}  # each read in its student's own job, on their budget
    taken: set[str] = set()
    stems = {}
    for student in entries:
        stems[student] = file_stem(student, taken)
    rows: list[Row] = []
    jobs = jobs_for(config.isolation, jobs)
    spans: dict[str, tuple[float, float]] = {}
    imports = (config.rubric or rubric_mod.load()).imports
    # The launcher imports torch once for all when some hand-in mentions it (a raw, streamed look, not a read).
    torch = any(e.mentions(b"torch") for e in found.entries)
    spawner = launch.launcher(config.isolation, [b"torch"] if torch else [], imports, jobs)
    memory_killed: set[str] = set()  # the kernel killed a process of theirs for want of memory

    def one(student: str) -> Row:
        began = time.monotonic()
        try:
            return graded(student)
        finally:
            spans[student] = (began, time.monotonic())

    def graded(student: str) -> Row:
        entry = entries[student]
        began, late, identity = time.perf_counter(), entry.late, entry.identity or student
        if student not in handins:  # a regrade alone reads nothing again
            handins[student] = _open(entry, Caps(), config.limits.submission_seconds)
        handin = handins[student]
        error = handin if isinstance(handin, str) else ""
        watched = launch.Watched(spawner)
        try:
            if error:
                raise RuntimeError(error)
            try:
                result = grade(handin, config, student=student, spawner=watched, identity=identity)
            except launch.LaunchError:  # the server died under this student (not their doing): once more
                result = grade(handin, config, student=student, spawner=watched, identity=identity)
        except Exception as exc:  # noqa: BLE001 - one submission never costs the others their grades
            error = error or f"{type(exc).__name__}: {exc}"
            result = None
        finally:
            if watched.memory_kills:
                memory_killed.add(student)
        try:
            if result is None:
                why = Message("grade.failed", {"error": error[:300]})
                result = failed(student, config, config.rubric, why, began, "grader error", identity=identity)
            write_json(results_dir / f"{stems[student]}.json", result.to_gradescope())
        except Exception as exc:  # noqa: BLE001 - the gradebook's row is still written
            error = error or f"{type(exc).__name__}: {exc}"
        return Row(student, result, error, late, entry, stems[student])

    again: list[str] = []
    share, at_once = None, jobs
    try:
        at_once = spawner.placement.plan()  # fewer than jobs where the memory cannot hold that many
        with ThreadPoolExecutor(max_workers=at_once) as pool:
            futures = [pool.submit(one, s) for s in entries]
            with ProgressBar(len(futures), "grading") as bar:
                for future in as_completed(futures):
                    rows.append(future.result())
                    bar.advance()
        # Time limits are wall clock: a submission that ran out of time while a neighbour was busy may only
        # have been starved of CPU by it (a hostile neighbour's spinning processes); one the kernel killed
        # for want of memory may have been the victim of a neighbour's. It is graded once more, alone (with
        # all the memory there is), after everyone else's processes are gone, and that grade counts; never a
        # third time.
        share = spawner.placement.share  # how the memory was shared among the jobs (None: no cgroups)
        again = to_grade_again(rows, spans, memory_killed)
        if again:
            spawner.placement.alone()
            rows = [r for r in rows if r.student not in again]
            with ProgressBar(len(again), "grading alone") as bar:
                for student in again:
                    rows.append(graded(student))
                    bar.advance()
    finally:
        spawner.close()
    rows.sort(key=lambda r: (r.student.lower(), r.student))
    max_score = max((r.result.max_score for r in rows if r.result), default=0.0)
    atomic_write_text(csv_path, gradebook_text(rows, max_score))
    seconds = time.perf_counter() - start
    run_record.write(csv_path, run_record.make(config, submissions or directory, results_dir, stems, seconds,
                                               feedback_dir))  # for the class page
    said = summary(rows, max_score, seconds, config.lang, again, found.not_submissions, out_of)
    if share is not None and min(share.at_once, at_once) < jobs:
        said += "\n" + text(config.lang, "batch.memory", at_once=min(share.at_once, at_once), jobs=jobs,
                             mib=share.each >> 20)
    return rows, said


def jobs_for(isolation: str, jobs: int) -> int:
    """How many submissions run at once: one in the uid mode, where every submission shares the disk,
    /tmp and the kernel's per-machine limits with the others and only grading them one at a time (each
    cleaned up before the next) keeps one from costing another its grade."""
    return 1 if isolation == "uid" else jobs


def to_grade_again(rows: list[Row], spans: dict[str, tuple[float, float]], memory_killed: set[str] = frozenset(),
                   ) -> list[str]:
    """Those that ran out of time, or lost a process to the kernel for want of memory, while another
    submission was being graded (their spans overlap)."""
    def had_a_neighbour(student: str) -> bool:
        began, ended = spans.get(student, (0.0, 0.0))
        return any(s != student and b < ended and e > began for s, (b, e) in spans.items())

    return sorted(r.student for r in rows if r.result is not None and had_a_neighbour(r.student)
                  and (r.result.ran_out_of_time or r.student in memory_killed))


class ProgressBar:
    """A progress bar that says how many submissions are left."""

    def __init__(self, total: int, desc: str):
        self.left = total
        self.bar = tqdm(total=total, desc=desc, unit="submission", disable=None)
        self.bar.set_postfix_str(f"{total} left")

    def advance(self) -> None:
        self.left -= 1
        self.bar.set_postfix_str(f"{self.left} left", refresh=False)
        self.bar.update(1)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.bar.close()


def summary(rows: list[Row], max_score: float, seconds: float, lang: str, again: list[str] = (),
            not_submissions: list[Skipped] = (), out_of: float | None = None) -> str:
    """What the batch prints; the mean on the LMS's scale when ``out_of`` is given (``--out-of``), as the
    grades the LMS receives are."""
    if out_of is None:
        totals = [r.result.score if r.result else 0.0 for r in rows]
    else:
        totals, max_score = [r.result.on_scale(out_of) if r.result else 0.0 for r in rows], out_of
    mean = sum(totals) / max(len(totals), 1)
    lines = [text(lang, "batch.summary", count=len(rows), seconds=seconds, mean=mean, max_score=max_score)]
    if again:
        lines.append(text(lang, "batch.again", count=len(again), students=", ".join(again)))
    for r in rows:
        if r.error:
            lines.append(text(lang, "batch.failed", student=r.student, error=r.error))
        elif r.result is not None and r.result.status != "graded":
            lines.append(text(lang, "batch.not_graded", student=r.student, status=status_word(r.result.status),
                              reason=r.result.reason))
    for why in dict.fromkeys(s.why for s in not_submissions):  # one line per reason, in the folder's order
        said = {"suffixes": ", ".join(SUFFIXES)} if why is Why.NOT_A_HANDIN else {}
        lines.append(text(lang, "batch.not_submissions", why=Message(f"skipped.{why}", said),
                          names=", ".join(s.name for s in not_submissions if s.why == why)))
    for r in rows:
        if r.entry is not None and r.entry.lookalike:
            lines.append(text(lang, "batch.lookalike", student=r.student, others=r.entry.lookalike))
    counts = Counter(m for r in rows if r.result for m in r.result.mistakes)
    if counts:
        lines.append(text(lang, "batch.mistakes"))
        lines += [f"  {mistake_named(m).text(lang):<60} {counts[m]}" for m in NAMED_MISTAKES if counts[m]]
    else:
        lines.append(text(lang, "batch.no_mistakes"))
    return "\n".join(lines)
