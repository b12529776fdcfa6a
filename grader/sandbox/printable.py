"""Text a submission produced, made safe to show: no control or invisible characters, its lines marked as its own."""

from __future__ import annotations

import re

# Everything a terminal could act on: C0 and C1 controls (ESC, BEL, CR, ...) but tab and newline; and the
# Unicode bidirectional marks, embeddings, overrides and isolates, with which text shows in another order
# than it is written in a terminal, a spreadsheet or Gradescope's page ("Trojan Source", CVE-2021-42574);
# and the invisible ones, with which text carries what no reader sees: zero-width spaces and joiners
# (U+200B-U+200D, U+2060, U+FEFF), the invisible operators (U+2061-U+2064), the Mongolian vowel separator,
# line and paragraph separators, and the tag characters (U+E0000-U+E007F, "ASCII smuggling").
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069"
                      r"\ufeff\U000e0000-\U000e007f]")
OUTPUT_MARK = "| "  # starts every line a submission printed, wherever the grader shows it


def printable(text: str) -> str:
    """Text a student's code produced, safe to show on an instructor's terminal or in a CSV."""
    return _CONTROL.sub("\ufffd", text)


def quoted_output(text: str) -> str:
    """What a submission printed, each line marked as its own: it cannot pass for a line of the grader's
    (a forged results table, a "30/30")."""
    return "\n".join(OUTPUT_MARK + line for line in printable(text).rstrip("\n").split("\n"))
