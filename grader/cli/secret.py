"""``python -m grader secret FILE``: a new instructor's secret, never over one in use."""

from __future__ import annotations

import os
from pathlib import Path

from grader import secret as secret_mod
from grader.cli.parsing import Parser, lang_option

NAME = "secret"


def parser(lang: str, public_seed: int, shown: str | None = None) -> Parser:
    p = Parser(NAME, lang, shown)
    p.add_argument("out", type=Path, help=p.h("out"))
    lang_option(p)
    return p


def run(args, lang: str, public_seed: int) -> int:
    fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never overwrites a secret in use
    with os.fdopen(fd, "w") as f:
        f.write(secret_mod.new())
    print(args.out)
    return 0
