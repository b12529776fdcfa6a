"""The command line: grade one file, a directory (batch), print the template, build the Gradescope bundle.

Exit codes: 0 full marks (or the batch/bundle/template was written), 1 points were lost, 2 usage
error (one line on stderr, never a traceback). Every line the grader writes is in the language of
``--lang`` (default: from LANG), argparse's own phrases excepted.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from grader import r_selfcheck, template
from grader import rubric as rubric_mod
from grader import secret as secret_mod
from grader.functions.contract import DEFAULT_SEED
from grader.grade import GradeConfig, grade
from grader.intake import bounded
from grader.intake.handin import SUFFIXES
from grader.messages import CATALOG, LANGS, Message, MessageError, default_lang, text
from grader.sandbox import isolation
from grader.sandbox.limits import Limits
from mha.files import atomic_write_text, write_json


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


class _Parser(argparse.ArgumentParser):
    """argparse in the language of --lang: the description, each option's help (``h``) and argparse's own
    headings come from the catalog's help.* messages."""

    def __init__(self, command: str, lang: str, **values):
        self.lang, self.command = lang, command
        super().__init__(prog=f"python -m grader {command}".strip(), add_help=False,
                         description=self.h("description", **values))
        self._positionals.title = text(lang, "help.positionals")
        self._optionals.title = text(lang, "help.options")
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS, help=text(lang, "help.help"))

    def h(self, name: str, /, **values) -> str:
        """The help of ``name`` for this command (help.COMMAND.NAME), else the one all commands share (help.NAME)."""
        own = f"help.{self.command or 'main'}.{name}"
        return text(self.lang, own if own in CATALOG.entries else f"help.{name}", **values)

    def _get_formatter(self):
        formatter = super()._get_formatter()
        add_usage = formatter.add_usage
        formatter.add_usage = lambda usage, actions, groups, prefix=None: add_usage(
            usage, actions, groups, prefix or text(self.lang, "help.usage"))
        return formatter

    def error(self, message: str):  # one line instead of argparse's usage block
        raise UsageError("usage.argparse", error=message)


def _lang_option(parser: _Parser) -> None:
    parser.add_argument("--lang", choices=LANGS, default=None, help=parser.h("lang"))


def requested_lang(argv: list[str]) -> str:
    """The --lang of ``argv`` if it names a language, else the default: known before argparse runs, so that
    its errors are worded in it too."""
    given = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--lang"]
    given += [arg.removeprefix("--lang=") for arg in argv if arg.startswith("--lang=")]
    known = [lang for lang in given if lang in LANGS]
    return known[-1] if known else default_lang()


def _common(parser: _Parser) -> None:
    _lang_option(parser)
    parser.add_argument("--seed", type=int, default=None, help=parser.h("seed", seed=DEFAULT_SEED))
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


def _main_parser(lang: str) -> _Parser:
    p = _Parser("", lang)
    p.add_argument("target", nargs="?", type=Path, help=p.h("target"))
    p.add_argument("--json", type=Path, default=None, help=p.h("json"))
    p.add_argument("--template", action="store_true", help=p.h("template"))
    p.add_argument("--contract", choices=("functions", "module"), default="functions", help=p.h("contract"))
    p.add_argument("--language", choices=("python", "r"), default="python", help=p.h("language"))
    p.add_argument("--out", type=Path, default=None, help=p.h("out"))
    p.add_argument("--helper", type=Path, action="append", default=[], help=p.h("helper"))
    p.add_argument("--csv", type=Path, default=None, help=p.h("csv"))
    p.add_argument("--jobs", type=int, default=1, help=p.h("jobs"))
    p.add_argument("--results-dir", type=Path, default=None, help=p.h("results_dir"))
    p.add_argument("--class-page", type=Path, default=None, help=p.h("class_page"))
    _similarity_option(p)
    lms = p.add_argument_group(p.h("lms_group"))
    lms.add_argument("--lms-pattern", action="append", default=[], metavar="NAME=REGEX", help=p.h("lms_pattern"))
    lms.add_argument("--out-of", type=float, default=None, help=p.h("out_of"))
    lms.add_argument("--moodle-worksheet", type=Path, default=None, help=p.h("moodle_worksheet"))
    lms.add_argument("--moodle-feedback", type=Path, default=None, help=p.h("moodle_feedback"))
    lms.add_argument("--canvas-gradebook", type=Path, default=None, help=p.h("canvas_gradebook"))
    lms.add_argument("--canvas-assignment", default=None, help=p.h("canvas_assignment"))
    lms.add_argument("--feedback-dir", type=Path, default=None, help=p.h("feedback_dir"))
    _common(p)
    return p


def _similarity_option(parser: _Parser) -> None:
    from grader.classpage.similarity import DEFAULT_THRESHOLD

    parser.add_argument("--similarity-threshold", type=float, default=DEFAULT_THRESHOLD,
                        help=parser.h("similarity_threshold", default=DEFAULT_THRESHOLD))


def _check_threshold(value: float) -> None:
    if not 0.0 < value <= 1.0:
        raise UsageError("usage.similarity_threshold", value=value)


def _class_page(argv: list[str]) -> int:
    p = _Parser("class-page", requested_lang(argv))
    p.add_argument("csv", type=Path, help=p.h("csv"))
    p.add_argument("--out", type=Path, default=None, help=p.h("out"))
    p.add_argument("--submissions", type=Path, default=None, help=p.h("submissions"))
    p.add_argument("--results-dir", type=Path, default=None, help=p.h("results_dir"))
    p.add_argument("--feedback-dir", type=Path, default=None, help=p.h("feedback_dir"))
    _similarity_option(p)
    _lang_option(p)
    args = p.parse_args(argv)
    lang = args.lang or default_lang()
    _check_threshold(args.similarity_threshold)
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


def _config(args) -> GradeConfig:
    for option, value in (("--timeout", args.timeout), ("--import-timeout", args.import_timeout),
                          ("--budget", args.budget)):
        if not Limits.seconds_allowed(value):
            raise UsageError("usage.timeout", option=option, value=value, most=Limits.MAX_SECONDS)
    try:
        limits = replace(Limits(), call_timeout=args.timeout, import_timeout=args.import_timeout,
                         submission_seconds=args.budget, cpu_seconds=max(1, round(args.budget)))
        rubric = rubric_mod.load(args.rubric)
    except ValueError as exc:
        raise UsageError.of(exc) from None
    return GradeConfig(seed=DEFAULT_SEED if args.seed is None else args.seed, lang=args.lang, limits=limits,
                       rubric=rubric, isolation=args.isolation, secret=_secret(args))


def _secret(args) -> bytes | None:
    """The secret from --secret-file, else GRADER_SECRET; None when neither is there. A file that was named
    and cannot be read is refused: never the public seed instead."""
    try:
        secret = secret_mod.read(args.secret_file) if args.secret_file is not None else secret_mod.from_env()
    except MessageError as exc:
        raise UsageError.of(exc) from None
    if args.seed is not None and args.seed < 0:
        raise UsageError("usage.seed_negative", seed=args.seed)
    if secret is not None and args.seed is not None:
        raise UsageError("usage.secret_and_seed")
    return secret


def _check_isolation(args, batch: bool) -> str | None:
    """Pick the strongest isolation this machine allows for --isolation auto; a batch is refused
    without it unless the instructor said the code is trusted. Returns a note when a single file
    runs with weaker isolation than asked."""
    try:
        args.isolation, why = isolation.choose(args.isolation, batch)
    except isolation.IsolationUnavailable as exc:
        raise UsageError.of(exc) from None
    return Message("isolation.fallback", {"mode": args.isolation, "problem": why}).text(args.lang) if why else None


def _bundle(argv: list[str]) -> int:
    p = _Parser("bundle", requested_lang(argv))
    p.add_argument("--out", type=Path, required=True, help=p.h("out"))
    p.add_argument("--rubric", type=Path, default=None, help=p.h("rubric"))
    p.add_argument("--secret-file", type=Path, default=None, help=p.h("secret_file"))
    _lang_option(p)
    args = p.parse_args(argv)
    from grader import bundle

    try:
        if args.rubric is not None:
            rubric_mod.load(args.rubric)  # refuse a bad rubric now, not on Gradescope
        secret = None if args.secret_file is None else secret_mod.read(args.secret_file).hex() + "\n"
        out = bundle.build(args.out, args.rubric, secret)
    except ValueError as exc:
        raise UsageError.of(exc) from None
    print(out)
    return 0


def _new_secret(argv: list[str]) -> int:
    p = _Parser("secret", requested_lang(argv))
    p.add_argument("out", type=Path, help=p.h("out"))
    _lang_option(p)
    args = p.parse_args(argv)
    fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never overwrites a secret in use
    with os.fdopen(fd, "w") as f:
        f.write(secret_mod.new())
    print(args.out)
    return 0


def _gradescope(argv: list[str]) -> int:
    p = _Parser("gradescope", requested_lang(argv))
    p.add_argument("submission_dir", type=Path, help=p.h("submission_dir"))
    p.add_argument("results_json", type=Path, help=p.h("results_json"))
    p.add_argument("--metadata", type=Path, default=None, help=p.h("metadata"))
    _common(p)
    args = p.parse_args(argv)
    args.lang = args.lang or default_lang()
    from grader import bundle

    note = _check_isolation(args, batch=False)
    config = _config(args)  # a missing secret is refused here, before anything is graded
    if note:
        print(note, file=sys.stderr)
    identity = secret_mod.gradescope_identity(args.metadata) if args.metadata is not None else None
    result = bundle.run_gradescope(args.submission_dir, args.results_json, config, identity)
    if result is not None:
        print(result.table())
    return 0


def run(argv: list[str]) -> int:
    if argv[:1] == ["bundle"]:
        return _bundle(argv[1:])
    if argv[:1] == ["gradescope"]:
        return _gradescope(argv[1:])
    if argv[:1] == ["secret"]:
        return _new_secret(argv[1:])
    if argv[:1] == ["class-page"]:
        return _class_page(argv[1:])
    args = _main_parser(requested_lang(argv)).parse_args(argv)
    lang = args.lang = args.lang or default_lang()
    if args.template:
        starter = template.render_r(lang) if args.language == "r" else template.render(lang, args.contract)
        if args.out is not None:
            atomic_write_text(args.out, starter)
            if args.language == "r":  # the R student's self-check in R alone, beside the starter
                atomic_write_text(args.out.with_name(r_selfcheck.FILE_NAME), r_selfcheck.render(lang))
        else:
            sys.stdout.write(starter)
        return 0
    if args.target is None:
        raise UsageError("usage.no_target")
    target: Path = args.target
    if target.is_dir() or (args.csv is not None and target.suffix.lower() == ".zip" and target.is_file()):
        from grader.lms import class_run  # pandas and tqdm load only for batch grading

        if args.csv is None:
            raise UsageError("usage.dir_needs_csv", path=target)
        if args.jobs < 1:
            raise UsageError("usage.jobs", jobs=args.jobs)
        if args.seed is None and args.secret_file is None and secret_mod.ENV not in os.environ:
            raise UsageError("usage.batch_needs_seed", seed=DEFAULT_SEED)
        _check_isolation(args, batch=True)
        _check_threshold(args.similarity_threshold)
        try:
            summary = class_run.run(target, args, _config(args))
        except class_run.EmptyClass:
            raise UsageError("usage.empty_dir", path=target) from None
        except ValueError as exc:
            raise UsageError.of(exc) from None
        print(summary)
        return 0
    if not target.exists() and not target.is_symlink():
        raise UsageError("usage.no_file", path=target)
    if target.suffix.lower() not in SUFFIXES:
        raise UsageError("usage.not_py", path=target)
    if target.suffix.lower() == ".zip":
        from grader.lms.download import class_download

        download = class_download(target)
        if download is not None:  # an LMS's whole class, not one student's zip
            raise UsageError("usage.download_needs_csv", path=target, count=download[0], lms=download[1])
    bounded.prestart()  # the intake's helper starts while the sandbox is probed
    note = _check_isolation(args, batch=False)
    if note:
        print(note, file=sys.stderr)
    result = grade(target, _config(args), helpers=tuple(args.helper), neighbours=True)  # a lone file: its own helper
    if args.json is not None:  # before anything is printed: the file is there whatever the console does
        write_json(args.json, result.to_gradescope())
    print(result.table())
    return 0 if result.full_marks and result.status == "graded" else 1


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
