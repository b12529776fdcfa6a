"""``python -m grader gradescope SUBMISSION RESULTS``: what run_autograder calls inside Gradescope."""

from __future__ import annotations

import sys
from pathlib import Path

from grader import secret as secret_mod
from grader.cli import grading
from grader.cli.parsing import Parser, grading_options

NAME = "gradescope"


def parser(lang: str, public_seed: int, shown: str | None = None) -> Parser:
    p = Parser(NAME, lang, shown)
    p.add_argument("submission_dir", type=Path, help=p.h("submission_dir"))
    p.add_argument("results_json", type=Path, help=p.h("results_json"))
    p.add_argument("--metadata", type=Path, default=None, help=p.h("metadata"))
    grading_options(p, public_seed)
    return p


def run(args, lang: str, public_seed: int) -> int:
    from grader import bundle

    mode, note = grading.isolation(args.isolation, batch=False, lang=lang)
    config = grading.config(grading.checked(args, public_seed), lang, mode)  # a missing secret: refused before grading
    if note:
        print(note, file=sys.stderr)
    identity = secret_mod.gradescope_identity(args.metadata) if args.metadata is not None else None
    result = bundle.run_gradescope(args.submission_dir, args.results_json, config, identity)
    if result is not None:
        print(result.table())
    return 0
