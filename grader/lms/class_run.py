"""A class from the download to the gradebook and the LMS's files: the batch command's whole path.

The target is a folder (unpacked by the instructor) or the LMS's zip as downloaded (``grader.lms.download``);
the batch grades it (``grader.batch``), and the exports asked for on the command line are written from the same
rows (``grader.lms.exports``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from grader import batch
from grader.intake import layouts
from grader.lms import canvas, download, exports, moodle
from grader.messages import Message, text


class EmptyClass(Exception):
    """No student in the folder or the zip."""


@dataclass(frozen=True)
class ClassRequest:
    """What to grade and what to write, every value checked by the command line (``grader.cli.grade_class``)."""

    target: Path  # a folder of hand-ins, or the LMS's zip as downloaded
    csv: Path  # the gradebook to write
    similarity_threshold: float  # the class page's: pairs at least this similar are shown
    jobs: int = 1
    results_dir: Path | None = None  # one results JSON per student (None: beside the gradebook)
    class_page: Path | None = None
    lms_patterns: tuple[tuple[str, str], ...] = ()  # (name, regex) of another LMS's file names, tried first
    out_of: float | None = None  # the exports' scale (None: the rubric's)
    moodle_worksheet: Path | None = None
    moodle_feedback: Path | None = None
    canvas_gradebook: Path | None = None
    canvas_assignment: str | None = None  # Canvas's column for the assignment, "Name (id)"
    feedback_dir: Path | None = None

    def __post_init__(self):
        """Refuse, in the catalogue's words, what cannot be run: before anything is graded."""
        if not (isinstance(self.jobs, int) and self.jobs >= 1):
            raise Message.error("usage.jobs", jobs=self.jobs)
        if self.out_of is not None and not self.out_of > 0:
            raise Message.error("usage.out_of", value=self.out_of)
        if not 0.0 < self.similarity_threshold <= 1.0:
            raise Message.error("usage.similarity_threshold", value=self.similarity_threshold)
        if self.canvas_gradebook is not None and self.canvas_assignment is None:
            raise Message.error("usage.canvas_needs_assignment")
        if self.canvas_assignment is not None:
            canvas.check_assignment(self.canvas_assignment)
        for name, regex in self.lms_patterns:
            layouts.layout(name, regex)  # a bad one refused here, by name


def known_layouts(patterns: tuple[tuple[str, str], ...]) -> tuple[layouts.Layout, ...]:
    """The built-in layouts and each (name, regex) of another LMS (tried first)."""
    return (*(layouts.layout(name, regex) for name, regex in patterns), *layouts.BUILT_IN)


def exports_asked(request: ClassRequest, lang: str) -> list[exports.Export]:
    """The exports the request asks for, in the order they are written and reported."""
    asked: list[exports.Export] = []
    if request.moodle_worksheet is not None:
        asked.append(moodle.Worksheet(request.moodle_worksheet, lang))
    if request.moodle_feedback is not None:
        asked.append(moodle.FeedbackZip(request.moodle_feedback))
    if request.canvas_gradebook is not None:
        asked.append(canvas.Gradebook(request.canvas_gradebook, request.canvas_assignment))
    if request.feedback_dir is not None:
        asked.append(exports.FeedbackFolder(request.feedback_dir))
    return asked


def run(request: ClassRequest, config) -> str:
    """Grade the class at ``request.target`` into ``request.csv`` and every export asked for; returns the summary."""
    known = known_layouts(request.lms_patterns)
    asked = exports_asked(request, config.lang)
    target = request.target
    with contextlib.ExitStack() as stack:
        folder = target if target.is_dir() else stack.enter_context(download.opened(target))
        if not batch.find(folder, known).entries:
            raise EmptyClass(target)
        results_dir = request.results_dir or request.csv.with_name(request.csv.stem + "_results")
        rows, summary = batch.grade_batch(folder, request.csv, results_dir, request.jobs, config, known,
                                          out_of=request.out_of, submissions=target,
                                          feedback_dir=request.feedback_dir)
        graded = exports.from_rows(rows)
        out_of = request.out_of or max((r.result.max_score for r in rows if r.result), default=0.0)
        written = [f"{export.path} ({export.write(graded, out_of)})" for export in asked]
        if request.class_page is not None:  # last, while the hand-ins are still here for the similarity check
            from grader.classpage import render

            render.write(request.csv, request.class_page, config.lang, request.similarity_threshold, folder,
                         results_dir, shown_as=target)
            written.append(str(request.class_page))
    return summary + ("\n" + text(config.lang, "batch.exported", files=", ".join(written)) if written else "")
