"""What every pipeline stage script shares: its lines for the person running `dvc repro`, and its exit codes.

A stage speaks plain English, one line each, prefixed with its name as DVC shows it ("train: ..."). It
exits with 0 when its outputs are written, EXIT_REFUSED when it refused an input (params.yaml, a file it
reads) and wrote nothing, and EXIT_FAILED when the work itself failed (a download, the worked example's
numbers).
"""

from __future__ import annotations

import sys
from typing import TextIO

from mha.params import EXIT_REFUSED

EXIT_FAILED = 1
# What a stage refuses with one line and no traceback: params.yaml (mha.params.ParamsError), the values it
# holds and the stage's input files (ValueError, e.g. mha.artifacts' errors), and files it cannot read.
REFUSALS = (ValueError, OSError)


def say(stage: str, text: object, *, file: TextIO | None = None) -> None:
    """``stage: text`` on stdout (or ``file``)."""
    print(f"{stage}: {text}", file=file or sys.stdout, flush=True)


def refuse(stage: str, problem: BaseException | str, *, nothing_written: str = "") -> int:
    """Say what was wrong on stderr (and that ``nothing_written`` was left as it was); EXIT_REFUSED."""
    say(stage, problem, file=sys.stderr)
    if nothing_written:
        say(stage, f"nothing written; {nothing_written} is unchanged", file=sys.stderr)
    return EXIT_REFUSED
