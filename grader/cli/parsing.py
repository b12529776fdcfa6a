"""What every command's parser shares: argparse in the language of --lang, the usage error, the options of grading.

A command's parser is built by its own module (``grader.cli.<command>``); this module holds only what two or more
of them use. It imports nothing heavy: ``python -m grader FILE`` starts its helpers before the judging is imported.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader import secret as secret_mod
from grader.messages import CATALOG, LANGS, Message, MessageError, default_lang, text
from grader.sandbox import isolation
from grader.sandbox.limits import Limits

CLASS_COMMAND = "class"  # its name in the catalogue's help and on the command line


class UsageError(Exception):
    """A bad command line: reported in one line in the language of --lang, exit code 2."""

    def __init__(self, key: str, /, **values):
        super().__init__(key)
        self.message = Message(key, values)

    @classmethod
    def of(cls, error: Exception) -> UsageError:
        """A refusal from the code the command line calls: its own message if it has one, else its text."""
        usage = cls("usage.bad_value", error=str(error))
        if isinstance(error, (MessageError, isolation.IsolationUnavailable)):
            usage.message = error.message
        return usage


class Parser(argparse.ArgumentParser):
    """argparse in the language of --lang: the description, each option's help (``h``) and argparse's own
    headings come from the catalog's help.* messages."""

    def __init__(self, command: str, lang: str, shown: str | None = None, **values):
        """``command``: its name (its help's keys); ``shown``: as its usage line spells it (``python -m grader
        FILE`` names no command)."""
        self.lang, self.command = lang, command
        super().__init__(prog=f"python -m grader {command if shown is None else shown}".strip(), add_help=False,
                         description=self.h("description", **values))
        self._positionals.title = text(lang, "help.positionals")
        self._optionals.title = text(lang, "help.options")
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS, help=text(lang, "help.help"))

    def h(self, name: str, /, **values) -> str:
        """The help of ``name`` for this command (help.COMMAND.NAME), else the one all commands share (help.NAME)."""
        own = f"help.{self.command}.{name}"
        return text(self.lang, own if own in CATALOG.entries else f"help.{name}", **values)

    def _get_formatter(self):
        formatter = super()._get_formatter()
        add_usage = formatter.add_usage
        formatter.add_usage = lambda usage, actions, groups, prefix=None: add_usage(
            usage, actions, groups, prefix or text(self.lang, "help.usage"))
        return formatter

    def error(self, message: str):  # one line instead of argparse's usage block
        raise UsageError("usage.argparse", error=message, command=self.prog)

    def option_names(self) -> dict[str, bool]:
        """Each option string this parser takes, and whether a value follows it."""
        return {name: action.nargs != 0 for action in self._actions for name in action.option_strings}


def requested_lang(argv: list[str]) -> str:
    """The --lang of ``argv`` if it names a language, else the default: known before argparse runs, so that
    its errors are worded in it too."""
    given = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--lang"]
    given += [arg.removeprefix("--lang=") for arg in argv if arg.startswith("--lang=")]
    known = [lang for lang in given if lang in LANGS]
    return known[-1] if known else default_lang()


def lang_option(parser: Parser) -> None:
    parser.add_argument("--lang", choices=LANGS, default=None, help=parser.h("lang"))


def grading_options(parser: Parser, public_seed: int) -> None:
    """The options of every command that grades (one file, a class, Gradescope's run)."""
    lang_option(parser)
    parser.add_argument("--seed", type=int, default=None, help=parser.h("seed", seed=public_seed))
    parser.add_argument("--secret-file", type=Path, default=None, help=parser.h("secret_file", env=secret_mod.ENV))
    parser.add_argument("--isolation", choices=isolation.MODES, default="auto", help=parser.h("isolation"))
    defaults, most = Limits(), Limits.MAX_SECONDS
    parser.add_argument("--timeout", type=float, default=defaults.call_timeout,
                        help=parser.h("timeout", default=defaults.call_timeout, most=most))
    parser.add_argument("--import-timeout", type=float, default=defaults.import_timeout,
                        help=parser.h("import_timeout", default=defaults.import_timeout, most=most))
    parser.add_argument("--rubric", type=Path, default=None, help=parser.h("rubric"))
    parser.add_argument("--budget", type=float, default=defaults.submission_seconds,
                        help=parser.h("budget", default=defaults.submission_seconds, most=most))


def similarity_option(parser: Parser, default: float | None, shown: float) -> None:
    """--similarity-threshold; ``shown``: the default the help names (``default`` None: given or not is told)."""
    parser.add_argument("--similarity-threshold", type=float, default=default,
                        help=parser.h("similarity_threshold", default=shown))


def check_threshold(value: float) -> float:
    if not 0.0 < value <= 1.0:
        raise UsageError("usage.similarity_threshold", value=value)
    return value
