"""``python -m grader class FOLDER --csv GRADES`` (or ``python -m grader FOLDER --csv GRADES``; ``batch`` is the same
command): a whole class, from the LMS's download to the gradebook and the LMS's files.

Every option is checked here, in the language of --lang, before anything is graded; the class run gets a
``ClassRequest`` of plain values.
"""

from __future__ import annotations

import os
from pathlib import Path

from grader import secret as secret_mod
from grader.cli import grading
from grader.cli.parsing import CLASS_COMMAND, Parser, UsageError, grading_options, similarity_option

NAME = CLASS_COMMAND
ALIASES = ("batch",)


def parser(lang: str, public_seed: int, shown: str | None = None) -> Parser:
    from grader.classpage import DEFAULT_THRESHOLD

    p = Parser(NAME, lang, shown)
    p.add_argument("target", type=Path, help=p.h("target"))
    p.add_argument("--csv", type=Path, default=None, help=p.h("csv"))
    p.add_argument("--jobs", type=int, default=1, help=p.h("jobs"))
    p.add_argument("--results-dir", type=Path, default=None, help=p.h("results_dir"))
    p.add_argument("--class-page", type=Path, default=None, help=p.h("class_page"))
    similarity_option(p, None, DEFAULT_THRESHOLD)
    lms = p.add_argument_group(p.h("lms_group"))
    lms.add_argument("--lms-pattern", action="append", default=[], metavar="NAME=REGEX", help=p.h("lms_pattern"))
    lms.add_argument("--out-of", type=float, default=None, help=p.h("out_of"))
    lms.add_argument("--moodle-worksheet", type=Path, default=None, help=p.h("moodle_worksheet"))
    lms.add_argument("--moodle-feedback", type=Path, default=None, help=p.h("moodle_feedback"))
    lms.add_argument("--canvas-gradebook", type=Path, default=None, help=p.h("canvas_gradebook"))
    lms.add_argument("--canvas-assignment", default=None, help=p.h("canvas_assignment"))
    lms.add_argument("--feedback-dir", type=Path, default=None, help=p.h("feedback_dir"))
    grading_options(p, public_seed)
    return p


def patterns(given: list[str]) -> tuple[tuple[str, str], ...]:
    """Each ``NAME=REGEX`` of --lms-pattern as (name, regex); the class request checks the regex."""
    found = []
    for one in given:
        name, sep, regex = one.partition("=")
        if not sep:
            raise UsageError("usage.lms_pattern", given=one)
        found.append((name.strip(), regex))
    return tuple(found)


def request(args):
    """The class run's ``ClassRequest`` from the command line, checked by the record itself."""
    from grader.classpage import DEFAULT_THRESHOLD
    from grader.lms.class_run import ClassRequest

    only_with(("--similarity-threshold", args.similarity_threshold, "--class-page", args.class_page),
              ("--canvas-assignment", args.canvas_assignment, "--canvas-gradebook", args.canvas_gradebook))
    if not args.target.exists():
        raise UsageError("usage.no_file", path=args.target)
    if args.csv is None:
        raise UsageError("usage.dir_needs_csv", path=args.target)
    threshold = DEFAULT_THRESHOLD if args.similarity_threshold is None else args.similarity_threshold
    try:
        return ClassRequest(
            target=args.target, csv=args.csv, similarity_threshold=threshold, jobs=args.jobs,
            results_dir=args.results_dir, class_page=args.class_page, lms_patterns=patterns(args.lms_pattern),
            out_of=args.out_of, moodle_worksheet=args.moodle_worksheet, moodle_feedback=args.moodle_feedback,
            canvas_gradebook=args.canvas_gradebook, canvas_assignment=args.canvas_assignment,
            feedback_dir=args.feedback_dir)
    except ValueError as exc:
        raise UsageError.of(exc) from None


def only_with(*pairs: tuple[str, object, str, object]) -> None:
    """Refuse an option given without the one it belongs to (it would be ignored)."""
    for option, value, needs, needed in pairs:
        if value is not None and needed is None:
            raise UsageError("usage.only_with", option=option, needs=needs)


def run(args, lang: str, public_seed: int) -> int:
    from grader.lms import class_run  # pandas and tqdm load only for a class

    wanted = request(args)
    if args.seed is None and args.secret_file is None and secret_mod.ENV not in os.environ:
        raise UsageError("usage.batch_needs_seed", seed=public_seed)
    mode, _ = grading.isolation(args.isolation, batch=True, lang=lang)
    config = grading.config(grading.checked(args, public_seed), lang, mode)
    try:
        summary = class_run.run(wanted, config)
    except class_run.EmptyClass:
        raise UsageError("usage.empty_dir", path=args.target) from None
    print(summary)
    return 0
