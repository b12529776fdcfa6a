"""Names from the file system, made safe to show: any byte, any length, on a terminal, in a CSV, in JSON."""

from __future__ import annotations

import os
import re

from grader.sandbox.printable import printable

SHOWN_CHARS = 80  # a name longer than this is cut (with an ellipsis): rows stay readable, file names legal
FILE_BYTES = 120  # the most UTF-8 bytes of a name used in a file the grader writes (results JSON)
# Markup characters: a name is text, never HTML where a page shows it (Gradescope, a spreadsheet's web view).
_MARKUP = str.maketrans({"<": "‹", ">": "›", "&": "+"})
_UNSAFE_IN_FILE = re.compile(r"[/\\\x00:*?\"|]")


def shown(name: str | bytes) -> str:
    """``name`` as the grader writes it anywhere: undecodable bytes, controls, escapes and bidi marks
    replaced, markup neutralised, cut to SHOWN_CHARS."""
    raw = os.fsencode(name) if isinstance(name, str) else name
    text = printable(raw.decode("utf-8", "replace")).translate(_MARKUP).strip()
    if len(text) > SHOWN_CHARS:  # cut in the middle: a file's suffix (.py, .ipynb) says what it is
        suffix = os.path.splitext(text)[1] if len(os.path.splitext(text)[1]) <= 8 else ""
        text = text[: SHOWN_CHARS - 1 - len(suffix)] + "…" + suffix
    return text or "?"


def file_stem(name: str, taken: set[str]) -> str:
    """A file name (without suffix) for ``name``, legal on every file system, not in ``taken`` (case
    ignored); the caller adds it to ``taken``."""
    stem = _UNSAFE_IN_FILE.sub("_", name).strip(". ") or "student"
    while len(stem.encode()) > FILE_BYTES:
        stem = stem[:-1]
    unique, k = stem, 2
    while unique.lower() in taken:
        unique, k = f"{stem}-{k}", k + 1
    return unique
