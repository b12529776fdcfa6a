"""Every cell of every CSV the grader writes, and the reading back of one: text no spreadsheet runs as a formula.

A spreadsheet (Excel, LibreOffice, Google Sheets) runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
formula, and some read a leading tab, CR or LF, or the full-width forms of those signs (what a Japanese or
Chinese input method types), the same way (OWASP's "CSV injection"). A student's name or a message can start
so: ``cell`` writes a ``'`` before such a cell, which a spreadsheet shows as text and hides. A cell that itself
starts with ``'`` gets one more, so that ``uncell`` gives back exactly what was written, whatever it was.

The gradebook (``grader.batch``), the LMS files (``grader.lms.exports``) and whatever is added later write
their rows with ``csv_text``; the class page (``grader.classpage.gradebook``) reads the gradebook back with
``uncell``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from grader.sandbox.printable import printable

# A spreadsheet runs a cell that starts so; "'" is here so that a cell written with one is read back unchanged.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20", "'")


def cell(value: object) -> str:
    """``value`` as a CSV cell: as text, no control character but tab and newline inside, no formula start."""
    text = printable("" if value is None else str(value))
    return "'" + text if text.startswith(FORMULA_START) else text


def uncell(text: str) -> str:
    """What ``cell`` was given (as text): its inverse, for a gradebook read back."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_START) else text


def csv_text(rows: Iterable[Iterable[object]], lineterminator: str = "\n") -> str:
    """The rows (the header first) as CSV text, every cell through ``cell``."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=lineterminator).writerows([cell(v) for v in row] for row in rows)
    return buffer.getvalue()
