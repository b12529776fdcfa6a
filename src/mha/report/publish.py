"""How a report stage hands over its page (reports/index.html, reports/lab.html): rendered completely in
memory, then written atomically. On bad input it says what is wrong in one line on stderr, then that nothing
was written, and any previous page stays as it was."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import jinja2

from mha.files import atomic_write_text
from mha.stage_messages import tell


def publish(stage: str, out: Path, templates: Path, render: Callable[[], tuple[str, str]]) -> int:
    """``render`` returns the page and its language; the stage's exit status: 0 written, 2 refused."""
    start = time.perf_counter()
    try:
        html, language = render()
    except ValueError as exc:  # mha.artifacts.records.ArtifactError and catalog errors among them
        tell(stage, exc)
        tell(stage, "report.nothing_written", path=out)
        return 2
    except (jinja2.TemplateError, OSError) as exc:  # a missing or broken template
        tell(stage, "report.template_broken", folder=templates, error=f"{type(exc).__name__}: {exc}")
        tell(stage, "report.nothing_written", path=out)
        return 2
    atomic_write_text(out, html)
    tell(stage, "report.wrote", file=sys.stdout, path=out, kib=len(html.encode("utf-8")) / 1024,
         page_language=language, seconds=time.perf_counter() - start)
    return 0
