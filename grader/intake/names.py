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


def name_key(name: str) -> str:
    """What two names must differ in to be two files on any file system and two rows an instructor tells apart:
    the name NFC-normalised (macOS and SMB shares store and compare names normalised: "José" typed composed and
    decomposed is one file there) and case-folded (they and Windows ignore case), then NFC again (case folding
    can leave a name decomposed)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def file_stem(name: str, taken: set[str]) -> str:
    """A file name (without suffix) for ``name``, NFC-normalised, legal on every file system, whose ``name_key``
    is not in ``taken``; it adds that key to ``taken``."""
    stem = _UNSAFE_IN_FILE.sub("_", unicodedata.normalize("NFC", name)).strip(". ") or "student"
    while len(stem.encode()) > FILE_BYTES:
        stem = stem[:-1]
    unique, k = stem, 2
    while name_key(unique) in taken:
        unique, k = f"{stem}-{k}", k + 1
    taken.add(name_key(unique))
    return unique


def skeleton(name: str) -> str:
    """What ``name`` looks like: Unicode's confusable skeleton (UTS #39, from ``disarm``, which folds compatibility
    forms such as full-width letters and maps letters of other scripts drawn like Latin ones, a Cyrillic а or a
    Greek ο, to them), with case, accents, spaces and ``._-`` dropped. Two names with the same skeleton read the
    same to a person, so the gradebook flags them."""
    import disarm  # here, not above: only a batch compares names, and a single file's start-up skips its 30-70 ms

    folded = unicodedata.normalize("NFKD", disarm.skeleton_key(name, digit_policy="tr39")).casefold()
    return "".join(c for c in folded if not unicodedata.combining(c) and not c.isspace() and c not in "._-")


def mixed_scripts(name: str) -> bool:
    """Latin letters beside Cyrillic or Greek ones in one name: how a look-alike is made."""
    scripts = {unicodedata.name(c, "").split(" ")[0] for c in name if c.isalpha()}
    return "LATIN" in scripts and bool(scripts & {"CYRILLIC", "GREEK"})
