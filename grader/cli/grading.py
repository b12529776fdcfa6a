"""The grading options of a command line, checked once and made into the grader's own configuration.

``checked`` reads what argparse read into plain, frozen values (packages never see argparse's ``Namespace``),
refusing in the language of --lang whatever is out of range, before anything starts; ``config`` makes them the
grader's ``GradeConfig`` once the mode is known; ``isolation`` resolves --isolation
auto into the strongest mode this machine runs, and the note a student sees when it is weaker than asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader import secret as secret_mod
from grader.cli.parsing import UsageError
from grader.messages import Message, MessageError
from grader.sandbox import isolation as isolation_mod
from grader.sandbox.limits import Limits

if TYPE_CHECKING:
    from grader.rubric import Rubric


@dataclass(frozen=True)
class Checked:
    """The grading options, every one checked: what ``config`` makes a ``GradeConfig`` of once a mode is chosen."""

    limits: Limits
    rubric: Rubric
    seed: int
    secret: bytes | None


def checked(args, public_seed: int) -> Checked:
    """The options of ``parsing.grading_options`` in ``args``, checked before anything starts; a refusal is worded."""
    from grader import rubric as rubric_mod

    for option, value in (("--timeout", args.timeout), ("--import-timeout", args.import_timeout),
                          ("--budget", args.budget)):
        if not Limits.seconds_allowed(value):
            raise UsageError("usage.timeout", option=option, value=value, most=Limits.MAX_SECONDS)
    try:
        limits = Limits(call_timeout=args.timeout, import_timeout=args.import_timeout,
                        submission_seconds=args.budget)
        rubric = rubric_mod.load(args.rubric)
    except ValueError as exc:
        raise UsageError.of(exc) from None
    return Checked(limits, rubric, public_seed if args.seed is None else args.seed, secret(args.secret_file, args.seed))


def config(options: Checked, lang: str, mode: str):
    """The ``GradeConfig`` of checked options, in ``mode`` (resolved)."""
    from grader.grade import GradeConfig

    return GradeConfig(seed=options.seed, lang=lang, limits=options.limits, rubric=options.rubric, isolation=mode,
                       secret=options.secret)


def secret(path: Path | None, seed: int | None) -> bytes | None:
    """The secret from --secret-file, else GRADER_SECRET; None when neither is there. A file that was named
    and cannot be read is refused: never the public seed instead."""
    try:
        found = secret_mod.read(path) if path is not None else secret_mod.from_env()
    except MessageError as exc:
        raise UsageError.of(exc) from None
    if seed is not None and seed < 0:
        raise UsageError("usage.seed_negative", seed=seed)
    if found is not None and seed is not None:
        raise UsageError("usage.secret_and_seed")
    return found


def isolation(requested: str, batch: bool, lang: str) -> tuple[str, str | None]:
    """The mode to run in for --isolation ``requested`` and, when it is weaker than asked, the note to show (in
    ``lang``); a batch is refused without isolation unless the instructor said the code is trusted."""
    try:
        mode, why = isolation_mod.choose(requested, batch)
    except isolation_mod.IsolationUnavailable as exc:
        raise UsageError.of(exc) from None
    return mode, Message("isolation.fallback", {"mode": mode, "problem": why}).text(lang) if why else None
