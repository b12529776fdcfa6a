"""The command line: ``python -m grader COMMAND``, each command with only its own options.

    grade FILE            one hand-in, as a student checks it (``python -m grader FILE`` is the same)
    class FOLDER --csv    a class, from the LMS's download to the gradebook (``batch``; ``python -m grader FOLDER``)
    template              the starter file (``--template`` is the same)
    class-page CSV        the instructor's class page from a saved gradebook
    bundle, gradescope    the Gradescope autograder, and what it runs there
    secret FILE           a new instructor's secret

An option of another command is refused with its name, never ignored. Exit codes: 0 full marks (or the class,
bundle, template was written), 1 points were lost, 2 usage error (one line on stderr, never a traceback). Every
line is in the language of ``--lang`` (default: from LANG), argparse's own phrases excepted.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grader.cli import bundle, class_page, grade_class, grade_file, gradescope, secret, starter
from grader.cli.parsing import UsageError, requested_lang
from grader.messages import text

__all__ = ["COMMANDS", "UsageError", "main", "run"]

COMMANDS = (grade_file, grade_class, starter, class_page, bundle, gradescope, secret)
_BY_NAME = {name: command for command in COMMANDS for name in (command.NAME, *getattr(command, "ALIASES", ()))}


def public_seed() -> int:
    """The public seed of the hidden cases (the contract's: no numpy to learn it)."""
    from grader.functions.contract import DEFAULT_SEED

    return DEFAULT_SEED


def run(argv: list[str]) -> int:
    lang = requested_lang(argv)
    seed = public_seed()
    command, rest, shown = _command(argv, lang, seed)
    parser = command.parser(lang, seed, shown)
    _refuse_foreign(rest, parser, command, lang, seed)
    args = parser.parse_args(rest)
    return command.run(args, args.lang or lang, seed)


def _command(argv: list[str], lang: str, seed: int):
    """The command ``argv`` asks for, the arguments it parses, and its name as its usage line shows it."""
    if argv and argv[0] in _BY_NAME and not argv[0].startswith("-"):
        return _BY_NAME[argv[0]], argv[1:], argv[0]
    if "--template" in argv:
        return starter, [arg for arg in argv if arg != "--template"], starter.NAME
    target, unknown = _target(argv, lang, seed)
    if unknown:  # argparse's own words, as for any option it does not know
        grade_file.parser(lang, seed, "").error(f"unrecognized arguments: {' '.join(unknown)}")
    if target is None and not {"-h", "--help"} & set(argv):
        raise UsageError("usage.no_target")
    path = Path(target) if target is not None else None
    csv = any(arg == "--csv" or arg.startswith("--csv=") for arg in argv)
    if path is not None and (path.is_dir() or (csv and path.suffix.lower() == ".zip" and path.is_file())):
        return grade_class, argv, ""
    return grade_file, argv, ""


def _target(argv: list[str], lang: str, seed: int) -> tuple[str | None, list[str]]:
    """The first argument that is neither an option nor an option's value, for the grading commands; and the
    options that neither of them knows."""
    takes_value = {**grade_file.parser(lang, seed).option_names(), **grade_class.parser(lang, seed).option_names()}
    skip, target, unknown = False, None, []
    for arg in argv:
        option = arg.split("=", 1)[0]
        if skip:
            skip = False
        elif arg.startswith("-") and arg != "-":
            if option not in takes_value and not any(option in c.parser(lang, seed).option_names() for c in COMMANDS):
                unknown.append(arg)
            skip = "=" not in arg and takes_value.get(option, False)
        elif target is None:
            target = arg
    return target, unknown


def _refuse_foreign(argv: list[str], parser, command, lang: str, seed: int) -> None:
    """An option another command takes, given to this one: refused with both names (argparse would only say it
    does not know it, and a flag silently ignored would be worse)."""
    own = parser.option_names()
    for arg in argv:
        option = arg.split("=", 1)[0]
        if not option.startswith("--") or option in own:
            continue
        owners = [other.NAME for other in COMMANDS if other is not command
                  and option in other.parser(lang, seed).option_names()]
        if owners:
            raise UsageError("usage.not_for_command", option=option, command=command.NAME, owners=", ".join(owners))


def _tolerant_console() -> None:
    """A console that cannot show a character (cp1252 on Windows: √, ᵀ, −) gets a '?' instead of a crash."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):  # not a text stream of ours (a test's capture)
            pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _tolerant_console()
    try:
        return run(argv)
    except UsageError as exc:
        print(f"grader: {exc.message.text(requested_lang(argv))}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unreadable submission, an unwritable --json/--csv path, a full disk
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"grader: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"grader: {text(requested_lang(argv), 'usage.interrupted')}", file=sys.stderr)
        return 130
