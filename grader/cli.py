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

from grader import rubric as rubric_mod
from grader import secret as secret_mod
from grader import template
from grader.cases import DEFAULT_SEED
from grader.grade import GradeConfig, grade
from grader.intake.handin import SUFFIXES
from grader.messages import LANGS, Message, MessageError, default_lang, text
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
    def error(self, message: str):  # one line instead of argparse's usage block
        raise UsageError("usage.argparse", error=message)


def _lang_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", choices=LANGS, default=None, help="language of every message (default: from LANG)")


def requested_lang(argv: list[str]) -> str:
    """The --lang of ``argv`` if it names a language, else the default: known before argparse runs, so that
    its errors are worded in it too."""
    given = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--lang"]
    given += [arg.removeprefix("--lang=") for arg in argv if arg.startswith("--lang=")]
    known = [lang for lang in given if lang in LANGS]
    return known[-1] if known else default_lang()


def _common(parser: argparse.ArgumentParser) -> None:
    _lang_option(parser)
    parser.add_argument("--seed", type=int, default=None,
                        help=f"a PUBLIC seed of the hidden cases, for self-checks and reproductions (default "
                             f"{DEFAULT_SEED}); a command line is readable by every user, so grades use a secret")
    parser.add_argument("--secret-file", type=Path, default=None,
                        help="the instructor's secret (hex, >= 128 bits; or the environment variable "
                             f"{secret_mod.ENV}): each student's hidden cases come from it and their name")
    parser.add_argument("--isolation", choices=isolation.MODES, default="auto",
                        help="auto (default): namespaces where they work, else a uid of its own as root, "
                             "else (one file only) trusted; namespaces; uid; trusted: a plain child process")
    defaults, most = Limits(), f"at most {Limits.MAX_SECONDS:g}"
    parser.add_argument("--timeout", type=float, default=defaults.call_timeout,
                        help=f"seconds allowed per call (default %(default)s, {most})")
    parser.add_argument("--import-timeout", type=float, default=defaults.import_timeout,
                        help=f"seconds allowed to import a submission (default %(default)s, {most})")
    parser.add_argument("--rubric", type=Path, default=None, help="TOML rubric overriding the default points")
    parser.add_argument("--budget", type=float, default=defaults.submission_seconds,
                        help="seconds of wall time (and of CPU per process) for a whole submission: the import "
                             f"and every call (default %(default)s, {most})")


def _main_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m grader", description="Grade masked multi-head attention submissions. "
                "Also: python -m grader bundle --out autograder.zip")
    p.add_argument("target", nargs="?", type=Path, help="student.py, or a directory of submissions (with --csv)")
    p.add_argument("--json", type=Path, default=None, help="write Gradescope's results.json here")
    p.add_argument("--template", action="store_true", help="print a starter student.py and exit")
    p.add_argument("--contract", choices=("functions", "module"), default="functions",
                   help="with --template: question 1's seven functions (default) or question 2's module")
    p.add_argument("--out", type=Path, default=None, help="with --template: write it to this file (UTF-8) instead")
    p.add_argument("--csv", type=Path, default=None, help="batch: the CSV gradebook to write")
    p.add_argument("--jobs", type=int, default=1, help="batch: submissions graded at once (default 1)")
    p.add_argument("--results-dir", type=Path, default=None,
                   help="batch: one results JSON per student (default: beside the CSV)")
    lms = p.add_argument_group("LMS (batch): the download as it came, and grades and feedback back in")
    lms.add_argument("--lms-pattern", action="append", default=[], metavar="NAME=REGEX",
                     help="another LMS's file names: a regex with named groups student and id (late, file optional)")
    lms.add_argument("--out-of", type=float, default=None, help="the exports' grade scale (default: the rubric's)")
    lms.add_argument("--moodle-worksheet", type=Path, default=None, help="write Moodle's grading worksheet CSV")
    lms.add_argument("--moodle-feedback", type=Path, default=None, help="write Moodle's feedback-files zip")
    lms.add_argument("--canvas-gradebook", type=Path, default=None, help="write Canvas's gradebook import CSV")
    lms.add_argument("--canvas-assignment", default=None, help='with --canvas-gradebook: "Assignment name (id)"')
    lms.add_argument("--feedback-dir", type=Path, default=None, help="write one feedback page per student here")
    _common(p)
    return p


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
    p = _Parser(prog="python -m grader bundle", description="Build the Gradescope autograder zip.")
    p.add_argument("--out", type=Path, required=True, help="the zip to write, e.g. autograder.zip")
    p.add_argument("--rubric", type=Path, default=None, help="a rubric to ship instead of the default")
    p.add_argument("--secret-file", type=Path, default=None,
                   help="the instructor's secret (default: a fresh random one, written into the bundle)")
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
    p = _Parser(prog="python -m grader secret", description="Write a new secret for the hidden cases (mode 0600).")
    p.add_argument("out", type=Path, help="the file to write, e.g. secret.txt (kept out of every repository)")
    _lang_option(p)
    args = p.parse_args(argv)
    fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never overwrites a secret in use
    with os.fdopen(fd, "w") as f:
        f.write(secret_mod.new())
    print(args.out)
    return 0


def _gradescope(argv: list[str]) -> int:
    p = _Parser(prog="python -m grader gradescope", description="Used by run_autograder inside Gradescope.")
    p.add_argument("submission_dir", type=Path)
    p.add_argument("results_json", type=Path)
    p.add_argument("--metadata", type=Path, default=None, help="Gradescope's submission_metadata.json: who submitted")
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
    args = _main_parser().parse_args(argv)
    lang = args.lang = args.lang or default_lang()
    if args.template:
        if args.out is not None:
            atomic_write_text(args.out, template.render(lang, args.contract))
        else:
            sys.stdout.write(template.render(lang, args.contract))
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
    note = _check_isolation(args, batch=False)
    if note:
        print(note, file=sys.stderr)
    result = grade(target, _config(args))
    if args.json is not None:  # before anything is printed: the file is there whatever the console does
        write_json(args.json, result.to_gradescope())
    print(result.table())
    return 0 if result.full_marks else 1


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
