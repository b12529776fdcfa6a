"""``python -m grader grade FILE`` (or ``python -m grader FILE``): one hand-in, graded as a student checks it.

The intake's helper process and, in a thread, the probe of the sandbox and the sandbox itself start first, then the
judging is imported while they run: a student's own check takes half a second, most of it those at once.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from grader.cli import grading
from grader.cli.parsing import Parser, UsageError, grading_options
from grader.grade_status import GradeStatus

NAME = "grade"


def parser(lang: str, public_seed: int, shown: str | None = None) -> Parser:
    p = Parser(NAME, lang, shown)
    p.add_argument("target", type=Path, help=p.h("target"))
    p.add_argument("--json", type=Path, default=None, help=p.h("json"))
    p.add_argument("--helper", type=Path, action="append", default=[], help=p.h("helper"))
    grading_options(p, public_seed)
    return p


def run(args, lang: str, public_seed: int) -> int:
    target: Path = args.target
    if not target.exists() and not target.is_symlink():
        raise UsageError("usage.no_file", path=target)
    if target.is_dir():
        raise UsageError("usage.dir_needs_csv", path=target)
    from grader.intake import bounded
    from grader.intake.handin import SUFFIXES

    if target.suffix.lower() not in SUFFIXES:
        raise UsageError("usage.not_py", path=target)
    if target.suffix.lower() == ".zip":
        from grader.lms.download import class_download

        download = class_download(target)
        if download is not None:  # an LMS's whole class, not one student's zip
            raise UsageError("usage.download_needs_csv", path=target, count=download[0], lms=download[1])
    options = grading.checked(args, public_seed)  # a bad option is refused before anything starts
    bounded.prestart()  # the intake's helper starts now, and the sandbox below, beside the imports of the judges
    sandbox: list = []
    starting = threading.Thread(target=_start_sandbox, args=(args, options, target, sandbox), name="early-sandbox",
                                daemon=True)
    starting.start()
    from grader.grade import grade
    from mha.files import write_json

    starting.join()
    early = sandbox[0] if sandbox else None
    if early is not None:
        early.started()  # a warm server in the namespaces that started answers the probe: choose runs none
    try:
        mode, note = grading.isolation(args.isolation, batch=False, lang=lang)
        config = grading.config(options, lang, mode)
    except BaseException:
        if early is not None:
            early.close()
        raise
    if early is not None and early.mode != mode:
        early.close()
        early = None
    if note:
        print(note, file=sys.stderr)
    result = grade(target, config, helpers=tuple(args.helper), neighbours=True,  # a lone file: its own helper
                   early=early)
    if args.json is not None:  # before anything is printed: the file is there whatever the console does
        write_json(args.json, result.to_gradescope())
    print(result.table())
    return 0 if result.full_marks and result.status == GradeStatus.GRADED else 1


def _start_sandbox(args, options: grading.Checked, target: Path, started: list) -> None:
    """Start the file's sandbox (``grader.sandbox.early``) into ``started``; on any trouble nothing, and the grading
    thread finds and says it as it would have."""
    try:
        from grader.sandbox import isolation
        from grader.sandbox.early import EarlyLauncher

        # --isolation auto tries the namespaces, where nothing they need is missing, by starting the server in them
        # rather than a probe first: the command line's choice then finds them working (or probes, and takes another).
        likely = args.isolation == "auto" and isolation.namespaces_missing() is None
        mode = "namespaces" if likely else isolation.choose(args.isolation, batch=False)[0]
        started.append(EarlyLauncher(mode, [target, *args.helper], options.rubric.imports))
    except Exception:  # noqa: BLE001, S110 - refused again, worded, where the command line checks it
        pass
