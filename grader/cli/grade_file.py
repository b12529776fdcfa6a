"""``python -m grader grade FILE`` (or ``python -m grader FILE``): one hand-in, graded as a student checks it.

The intake's helper process and the probe of the sandbox start first, then the judging is imported while they
run: a student's own check takes half a second, most of it those three at once.
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
    from grader.sandbox import isolation

    if target.suffix.lower() not in SUFFIXES:
        raise UsageError("usage.not_py", path=target)
    if target.suffix.lower() == ".zip":
        from grader.lms.download import class_download

        download = class_download(target)
        if download is not None:  # an LMS's whole class, not one student's zip
            raise UsageError("usage.download_needs_csv", path=target, count=download[0], lms=download[1])
    bounded.prestart()  # the intake's helper starts now, beside the probe and the imports below
    probe = threading.Thread(target=isolation.namespaces_problem, name="namespaces-probe", daemon=True)
    probed = args.isolation in ("auto", "namespaces")
    if probed:
        probe.start()
    from grader.grade import grade
    from mha.files import write_json

    if probed:
        probe.join()
    mode, note = grading.isolation(args.isolation, batch=False, lang=lang)
    config = grading.config(args, lang, mode, public_seed)
    if note:
        print(note, file=sys.stderr)
    result = grade(target, config, helpers=tuple(args.helper), neighbours=True)  # a lone file: its own helper
    if args.json is not None:  # before anything is printed: the file is there whatever the console does
        write_json(args.json, result.to_gradescope())
    print(result.table())
    return 0 if result.full_marks and result.status == GradeStatus.GRADED else 1
