"""Names from the file system, made safe to show: any byte, any length, on a terminal, in a CSV, in JSON."""

from __future__ import annotations

import os
import re
import unicodedata

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


# Letters of other scripts drawn like Latin ones (Unicode's confusables for the letters names use most).
_CONFUSABLE = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ӏ": "l", "ԛ": "q", "ԝ": "w",
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    "ı": "i", "ɑ": "a", "ℓ": "l", "0": "o", "1": "l", "|": "l",
})


def skeleton(name: str) -> str:
    """What ``name`` looks like: compatibility forms folded (full-width, ligatures), case and accents dropped,
    letters of other scripts drawn like Latin ones mapped to them. Two names with the same skeleton read
    the same to a person, so the gradebook flags them."""
    folded = unicodedata.normalize("NFKD", name).casefold()
    bare = "".join(c for c in folded if not unicodedata.combining(c) and not c.isspace() and c not in "._-")
    return bare.translate(_CONFUSABLE)


def mixed_scripts(name: str) -> bool:
    """Latin letters beside Cyrillic or Greek ones in one name: how a look-alike is made."""
    scripts = {unicodedata.name(c, "").split(" ")[0] for c in name if c.isalpha()}
    return "LATIN" in scripts and bool(scripts & {"CYRILLIC", "GREEK"})
