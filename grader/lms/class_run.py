"""A class from the download to the gradebook and the LMS's files: the batch command's whole path.

The target is a folder (unpacked by the instructor) or the LMS's zip as downloaded (``grader.lms.download``);
the batch grades it (``grader.batch``), and the exports asked for on the command line (``exports_asked``: objects
of ``grader.lms.moodle``, ``grader.lms.canvas`` and ``grader.lms.exports``) are written from the same rows, one
loop over them.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from grader import batch
from grader.intake import layouts
from grader.lms import canvas, download, exports, moodle
from grader.messages import text


class EmptyClass(Exception):
    """No student in the folder or the zip."""


def known_layouts(patterns: list[str]) -> tuple[layouts.Layout, ...]:
    """The built-in layouts and each ``NAME=REGEX`` of ``--lms-pattern`` (tried first)."""
    extra = []
    for given in patterns:
        name, sep, regex = given.partition("=")
        if not sep:
            raise ValueError(f"--lms-pattern {given!r} must be NAME=REGEX, e.g. "
                             r"'blackboard=(?P<student>[^_]+)_(?P<id>\d+)_(?P<file>.+)'")
        extra.append(layouts.layout(name.strip(), regex))
    return (*extra, *layouts.BUILT_IN)


def exports_asked(args, lang: str) -> list[exports.Export]:
    """The exports the command line asks for, in the order they are written and reported."""
    asked: list[exports.Export] = []
    if args.moodle_worksheet is not None:
        asked.append(moodle.Worksheet(args.moodle_worksheet, lang))
    if args.moodle_feedback is not None:
        asked.append(moodle.FeedbackZip(args.moodle_feedback))
    if args.canvas_gradebook is not None:
        asked.append(canvas.Gradebook(args.canvas_gradebook, args.canvas_assignment))
    if args.feedback_dir is not None:
        asked.append(exports.FeedbackFolder(args.feedback_dir))
    return asked


def run(target: Path, args, config) -> str:
    """Grade the class at ``target`` into ``args.csv`` and every export asked for; returns the summary."""
    known = known_layouts(args.lms_pattern)
    if args.canvas_gradebook is not None and args.canvas_assignment is None:
        raise ValueError("--canvas-gradebook needs --canvas-assignment 'Assignment name (id)', the column Canvas "
                         "names the assignment (Grades → Export shows it)")
    if args.out_of is not None and not args.out_of > 0:
        raise ValueError(f"--out-of must be a positive number of points, got {args.out_of}")
    asked = exports_asked(args, config.lang)
    with contextlib.ExitStack() as stack:
        folder = target if target.is_dir() else stack.enter_context(download.opened(target))
        if not batch.find(folder, known).entries:
            raise EmptyClass(target)
        results_dir = args.results_dir or args.csv.with_name(args.csv.stem + "_results")
        rows, summary = batch.grade_batch(folder, args.csv, results_dir, args.jobs, config, known,
                                          out_of=args.out_of, submissions=target, feedback_dir=args.feedback_dir)
        graded = exports.from_rows(rows)
        out_of = args.out_of or max((r.result.max_score for r in rows if r.result), default=0.0)
        written = [f"{export.path} ({export.write(graded, out_of)})" for export in asked]
        if args.class_page is not None:  # last, while the hand-ins are still here for the similarity check
            from grader.classpage import render

            render.write(args.csv, args.class_page, config.lang, args.similarity_threshold, folder, results_dir,
                         shown_as=target)
            written.append(str(args.class_page))
    return summary + ("\n" + text(config.lang, "batch.exported", files=", ".join(written)) if written else "")
