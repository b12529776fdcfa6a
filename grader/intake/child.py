"""What the sandbox's child needs to load a hand-in (``grader/sandbox/child_runner.py``'s config), and what it
says back."""

from __future__ import annotations

from grader.intake.handin import HandIn
from grader.sandbox.printable import printable

STATEMENT_SHARE = 0.5  # of the import time-out, for one top-level statement
LOAD_SHARE = 0.8  # of the import time-out, for all of them (the rest is the child's own start)
SKIPPED_KEPT = 20  # skipped statements reported back


def child_config(handin: HandIn, import_timeout: float, imports: tuple[str, ...]) -> dict:
    """The part of the first frame's config that says how to load ``handin``; ``imports``: what the rubric lets
    it import besides the standard library."""
    starts = handin.first_lines()
    language = {}
    if handin.language == "r":  # the child becomes R (grader/sandbox/r_runner.R)
        from grader.sandbox import r_language

        language = r_language.child_config()
    return {
        **language,
        "cells": [{"source": s, "line": line, "cell": c.number}
                  for s, line, c in zip(handin.sources(), starts, handin.cells, strict=True)],
        "helpers": [list(h) for h in handin.helpers],
        "imports": list(imports),
        "statement_seconds": import_timeout * STATEMENT_SHARE,
        "load_seconds": import_timeout * LOAD_SHARE,
    }


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
