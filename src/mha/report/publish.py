"""How a report stage hands over its page (reports/index.html, reports/lab.html): rendered completely in
memory, then written atomically. On bad input it says what is wrong in one line on stderr, then that nothing
was written, and any previous page stays as it was."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import jinja2

from mha.files import atomic_write_text
from mha.stage import refuse, say


def publish(stage: str, out: Path, templates: Path, render: Callable[[], tuple[str, str]]) -> int:
    """``render`` returns the page and its language; the stage's exit status (mha.stage)."""
    start = time.perf_counter()
    try:
        html, language = render()
    except ValueError as exc:  # mha.params.ParamsError and mha.artifacts.records.ArtifactError among them
        return refuse(stage, exc, nothing_written=str(out))
    except (jinja2.TemplateError, OSError) as exc:  # a missing or broken template
        return refuse(stage, f"cannot render the template in {templates}: {type(exc).__name__}: {exc}",
                      nothing_written=str(out))
    atomic_write_text(out, html)
    say(stage, f"wrote {out} ({len(html.encode('utf-8')) / 1024:.0f} KiB, {language}) "
               f"in {time.perf_counter() - start:.1f} s")
    return 0
