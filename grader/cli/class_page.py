"""``python -m grader class-page GRADES.csv``: the instructor's class page again, from a saved gradebook."""

from __future__ import annotations

from pathlib import Path

from grader.cli.parsing import Parser, UsageError, check_threshold, lang_option, similarity_option

NAME = "class-page"


def parser(lang: str, public_seed: int, shown: str | None = None) -> Parser:
    from grader.classpage import DEFAULT_THRESHOLD

    p = Parser(NAME, lang, shown)
    p.add_argument("csv", type=Path, help=p.h("csv"))
    p.add_argument("--out", type=Path, default=None, help=p.h("out"))
    p.add_argument("--submissions", type=Path, default=None, help=p.h("submissions"))
    p.add_argument("--results-dir", type=Path, default=None, help=p.h("results_dir"))
    p.add_argument("--feedback-dir", type=Path, default=None, help=p.h("feedback_dir"))
    similarity_option(p, DEFAULT_THRESHOLD, DEFAULT_THRESHOLD)
    lang_option(p)
    return p


def run(args, lang: str, public_seed: int) -> int:
    check_threshold(args.similarity_threshold)
    if not args.csv.is_file():
        raise UsageError("usage.no_file", path=args.csv)
    from grader.classpage import render

    out = args.out or args.csv.with_name(args.csv.stem + "_class.html")
    try:
        render.write(args.csv, out, lang, args.similarity_threshold, args.submissions, args.results_dir,
                     args.feedback_dir)
    except ValueError as exc:
        raise UsageError.of(exc) from None
    print(out)
    return 0
