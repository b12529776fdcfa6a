"""``python -m grader bundle --out autograder.zip``: the Gradescope autograder."""

from __future__ import annotations

from pathlib import Path

from grader import secret as secret_mod
from grader.cli.parsing import Parser, UsageError, lang_option

NAME = "bundle"


def parser(lang: str, public_seed: int, shown: str | None = None) -> Parser:
    p = Parser(NAME, lang, shown)
    p.add_argument("--out", type=Path, required=True, help=p.h("out"))
    p.add_argument("--rubric", type=Path, default=None, help=p.h("rubric"))
    p.add_argument("--secret-file", type=Path, default=None, help=p.h("secret_file"))
    lang_option(p)
    return p


def run(args, lang: str, public_seed: int) -> int:
    from grader import bundle
    from grader import rubric as rubric_mod

    try:
        if args.rubric is not None:
            rubric_mod.load(args.rubric)  # refuse a bad rubric now, not on Gradescope
        secret = None if args.secret_file is None else secret_mod.read(args.secret_file).hex() + "\n"
        out = bundle.build(args.out, args.rubric, secret)
    except ValueError as exc:
        raise UsageError.of(exc) from None
    print(out)
    return 0
