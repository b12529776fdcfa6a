"""What the sandbox's child needs to load a hand-in (the first frame's config, ``inside/wire.py``), and what it
says back about the statements it skipped: the grader's side of ``inside/loading.py``.

A leaf: it imports nothing of the rubric's or the checks'; the caller passes the allowed imports (the rubric's
``imports``), which the child takes as given, with no default of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from grader.sandbox.printable import printable

if TYPE_CHECKING:
    from grader.intake.handin import HandIn

STATEMENT_SHARE = 0.5  # of the import time-out, for one top-level statement
LOAD_SHARE = 0.8  # of the import time-out, for all of them (the rest is the child's own start)
SKIPPED_KEPT = 20  # skipped statements reported back


def child_config(handin: HandIn, import_timeout: float, imports: tuple[str, ...]) -> dict:
    """The part of the first frame's config that says how to load ``handin``, allowed to import ``imports``
    beyond the standard library (and its own helper modules)."""
    starts = handin.first_lines()
    language = _r_language() if handin.language == "r" else {}
    return {
        **language,
        "cells": [{"source": s, "line": line, "cell": c.number}
                  for s, line, c in zip(handin.sources(), starts, handin.cells, strict=True)],
        "helpers": [list(h) for h in handin.helpers],
        "imports": list(imports),
        "statement_seconds": import_timeout * STATEMENT_SHARE,
        "load_seconds": import_timeout * LOAD_SHARE,
    }


def _r_language() -> dict:
    """The entries that make the child become R (``inside/serving.py``'s ``_become_r``): R's program and
    environment, and the runner's source (R must be installed: see ``r_language.missing``)."""
    from grader.sandbox import r_language

    install = r_language.find()
    if install is None:
        raise RuntimeError(f"R is not installed here; install it with: apt-get install {r_language.PACKAGES}")
    return {"language": "r", "r": install.child_config(), "r_runner": r_language.RUNNER.read_text(encoding="utf-8")}


def skipped_fields(header: dict) -> tuple[dict, ...]:
    """The statements the child skipped, as plain strings and ints only, whatever else the header holds."""
    raw = header.get("skipped")
    if not isinstance(raw, list):
        return ()
    kept = []
    for item in raw[:SKIPPED_KEPT]:
        if not isinstance(item, dict):
            continue
        line, seconds = item.get("line"), item.get("seconds")
        kept.append({
            "kind": "timeout" if item.get("kind") == "timeout" else "error",
            "line": line if type(line) is int else None,
            "error": printable(str(item.get("error", ""))[:300]),
            "error_type": printable(str(item.get("error_type", ""))[:60]),
            "seconds": float(seconds) if type(seconds) in (int, float) else 0.0,
        })
    return tuple(kept)
