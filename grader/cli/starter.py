"""``python -m grader template``: the starter file a student fills in (``--template`` is the same command)."""

from __future__ import annotations

import sys
from pathlib import Path

from grader.cli.parsing import Parser, UsageError, lang_option

NAME = "template"
ALIASES = ("--template",)  # the first spelling, still in the students' notes


def parser(lang: str, public_seed: int, shown: str | None = None) -> Parser:
    from grader import template

    p = Parser(NAME, lang, shown)
    p.add_argument("--contract", choices=tuple(template.FILE_NAMES), default="functions", help=p.h("contract"))
    p.add_argument("--language", choices=template.LANGUAGES, default="python", help=p.h("language"))
    p.add_argument("--out", type=Path, default=None, help=p.h("out"))
    lang_option(p)
    return p


def run(args, lang: str, public_seed: int) -> int:
    from grader import r_selfcheck, template
    from mha.files import atomic_write_text

    if args.language == "r" and args.contract != "functions":
        raise UsageError("usage.r_module_template")
    starter = template.render_r(lang) if args.language == "r" else template.render(lang, args.contract)
    if args.out is None:
        sys.stdout.write(starter)
        return 0
    atomic_write_text(args.out, starter)
    if args.language == "r":  # the R student's self-check in R alone, beside the starter
        atomic_write_text(args.out.with_name(r_selfcheck.FILE_NAME), r_selfcheck.render(lang))
    return 0
