"""Notebooks and IPython syntax: what Jupyter and Colab write, made into code cells Python can run.

A ``.ipynb`` is read with nbformat (code cells in order, outputs ignored). Every cell, and a ``.py`` file
that only compiles once its IPython lines are transformed (a Colab "Download .py" keeps ``!pip install``),
goes through IPython's own ``TransformerManager``: ``!cmd`` becomes ``get_ipython().system(...)``,
``%magic`` ``get_ipython().run_line_magic(...)`` and a ``%%cell`` ``get_ipython().run_cell_magic(...)``.
The sandbox's stub ``get_ipython()`` makes them no-ops (``%%time`` and ``%%capture`` still run their body).
The transformer reads the whole cell again for each line it rewrites, so a file with more such lines than
``Caps.ipython_lines`` is refused rather than transformed. A cell's source is whatever nbformat allows (a
list of strings or one string): nbformat joins it, and everything here reads the joined text.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

from grader.intake.reading import Refused
from grader.messages import Message

SHOWN_LINES = 3  # IPython lines quoted in the note; the rest are counted
# A shell command or a magic, as IPython sees one (``!ls``, ``%time f()``, ``files = !ls``).
_IPYTHON_LINE = re.compile(r"^[ \t]*(?:[\w., \t]+=[ \t]*)?[!%]", re.MULTILINE)


@dataclass(frozen=True)
class Cell:
    source: str
    number: int | None  # the notebook's code-cell number (1-based), None for a .py file


class NotebookError(ValueError):
    """Not a notebook nbformat can read."""


def _transformer():
    from IPython.core.inputtransformer2 import TransformerManager  # 0.1 s: only when a hand-in needs it

    return TransformerManager()


def code_cells(text: str) -> tuple[list[str], int]:
    """The code cells of a notebook, in order (outputs and markdown dropped), and how many cells it has."""
    import nbformat

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            notebook = nbformat.reads(text, as_version=4)
        cells = notebook.cells
        code = [cell.source for cell in cells if cell.get("cell_type") == "code"]
        if not all(isinstance(source, str) for source in code):
            raise TypeError("a code cell's source is neither a string nor a list of strings")
    except MemoryError:
        raise  # the bounded helper process says so (grader.intake.bounded)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds for a file that is no notebook
        raise NotebookError(f"{type(exc).__name__}: {str(exc)[:200]}") from None
    return code, len(cells)


def ipython_lines(original: str, transformed: str) -> list[str]:
    """The lines IPython's transformer changed (a cell magic counts as its first line)."""
    before, after = original.splitlines(), transformed.splitlines()
    if len(before) != len(after):
        return [before[0].strip()] if before else []
    return [b.strip() for b, a in zip(before, after, strict=True) if b != a]


def transform(sources: list[str]) -> tuple[list[str], list[str]]:
    """Each source with its IPython lines made into ``get_ipython()`` calls, and the lines that changed."""
    manager = _transformer()
    out, changed = [], []
    for source in sources:
        try:
            new = manager.transform_cell(source)
        except Exception:  # noqa: BLE001 - a cell IPython cannot parse runs as written, and fails there
            new = source
        changed += ipython_lines(source, new)
        out.append(new)
    return out, changed


def ipython_note(changed: list[str]) -> Message | None:
    if not changed:
        return None
    shown = "; ".join(line[:60] for line in changed[:SHOWN_LINES])
    return Message("intake.ipython", {"count": len(changed), "lines": shown})


def python_cells(sources: list[str], notebook: bool, name: str, most: int) -> tuple[list[Cell], list[Message]]:
    """The cells to run for a notebook's code cells or a .py file's text (one source), and the note on
    skipped IPython lines; ``Refused`` past ``most`` IPython lines."""
    count = sum(len(_IPYTHON_LINE.findall(source)) for source in sources)
    if count > most:
        raise Refused(Message("intake.ipython_many", {"name": name, "count": count, "limit": most}))
    if notebook:
        originals = list(sources)
        sources, changed = transform(sources)
        cells = [Cell(s, i) for i, s in enumerate(sources, start=1)]
    else:
        originals = list(sources)
        (text,) = sources
        cells, changed = [Cell(text, None)], []
        if _needs_ipython(text):
            (new,), changed = transform([text])
            if _compiles(new):
                cells = [Cell(new, None)]
            else:
                changed = []
    # nbconvert writes the calls itself: get_ipython().run_line_magic('matplotlib', 'inline'). Only the lines
    # as handed in are read: a `!pip` line IPython turned into such a call is already counted once.
    changed += [line.strip() for source in originals for line in source.splitlines()
                if "get_ipython()" in line and line.strip() not in changed]
    note = ipython_note(changed)
    return cells, [note] if note else []


def _compiles(text: str) -> bool:
    try:
        compile(text, "<submission>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):  # RecursionError (too deep to compile) goes up: the hand-in is refused
        return False
    return True


def _needs_ipython(text: str) -> bool:
    """Python itself cannot compile this file (it may hold ``!pip`` or ``%matplotlib`` lines)."""
    return not _compiles(text)
