"""The grading options of a command line, checked once and made into the grader's own configuration.

``config`` turns what argparse read into a ``GradeConfig`` (plain, frozen values; packages never see argparse's
``Namespace``), refusing in the language of --lang whatever is out of range; ``isolation`` resolves --isolation
auto into the strongest mode this machine runs, and the note a student sees when it is weaker than asked.
"""

from __future__ import annotations

from pathlib import Path

from grader import secret as secret_mod
from grader.cli.parsing import UsageError
from grader.messages import Message, MessageError
from grader.sandbox import isolation as isolation_mod
from grader.sandbox.limits import Limits


def config(args, lang: str, mode: str, public_seed: int):
    """The ``GradeConfig`` of ``args`` (the options of ``parsing.grading_options``), in ``mode`` (resolved)."""
    from grader import rubric as rubric_mod
    from grader.grade import GradeConfig

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
    return GradeConfig(seed=public_seed if args.seed is None else args.seed, lang=lang, limits=limits,
                       rubric=rubric, isolation=mode, secret=secret(args.secret_file, args.seed))


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
