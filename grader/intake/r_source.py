"""R hand-ins: which files are R, the code to run from each shape, and the helper files it sources.

- ``.R``: the whole file, one cell (decoded as any source: UTF-8, CRLF, cp1252/latin-1 with a note).
- ``.Rmd`` and ``.qmd``: the code of the ``{r}`` chunks, what ``knitr::purl`` keeps, each chunk a cell on the
  document's own line numbers (the lines between chunks are left blank, so a note names the line the
  student sees). A chunk with ``eval = FALSE`` (or ``F``) in its header or ``#| eval: false`` at its top is
  not run; ``{python}``, ``{bash}`` and every other engine's chunks are skipped. knitr itself is not used
  here: it evaluates a chunk header's options as R code, and nothing of the student's runs outside the
  sandbox.
- a Jupyter notebook is R when its metadata says so (``kernelspec.language`` or ``language_info.name``),
  whatever its extension; its code cells are run as a Python notebook's are.
- ``source("utils.R")`` (or ``source('./utils.R')``) names a helper file beside the graded one, loaded with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from grader.intake.notebooks import Cell, code_cells
from grader.messages import Message

R_SUFFIXES = (".r", ".rmd", ".qmd")
MARKDOWN_SUFFIXES = (".rmd", ".qmd")
_FENCE_OPEN = re.compile(r"^\s*(`{3,})\s*\{\s*([A-Za-z0-9_.]+)(.*)\}\s*$")
_EVAL_FALSE = re.compile(r"(?:^|[\s,])eval\s*=\s*(?:FALSE|F)\b")
_QUARTO_EVAL_FALSE = re.compile(r"^\s*#\|\s*eval\s*:\s*(?:false|no)\s*$", re.IGNORECASE)
_SOURCE = re.compile(r"""\bsource\s*\(\s*(?:file\s*=\s*)?["'](?:\./)?([^"'/\\]+\.[Rr])["']""")
_TORCH = re.compile(r"\b(?:library|require|requireNamespace)\s*\(\s*[\"']?torch\b|\btorch::")
_DEFINES = r"\b{name}\s*(?:<-|<<-|=)\s*function\b"


def is_r(suffix: str, text: str | None = None) -> bool:
    """Whether a file is R: by its extension, or for a notebook by the language its metadata names."""
    suffix = suffix.lower()
    if suffix in R_SUFFIXES:
        return True
    return suffix == ".ipynb" and text is not None and notebook_language(text) == "r"


def notebook_language(text: str) -> str:
    """The language a notebook's metadata names, lower case ("python" when it names none)."""
    try:
        metadata = json.loads(text).get("metadata", {})
    except (ValueError, AttributeError):
        return "python"
    if not isinstance(metadata, dict):
        return "python"
    for where, key in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(where, {})
        if isinstance(value, dict) and isinstance(value.get(key), str):
            return value[key].strip().lower()
    return "python"


def defines(name: str) -> re.Pattern:
    """An R file's definition of ``name`` (``name <- function``), for choosing the graded file."""
    return re.compile(_DEFINES.format(name=name).encode())


def markdown_cells(text: str) -> list[Cell]:
    """The ``{r}`` chunks of an R Markdown or Quarto document that knitr would evaluate, on their own lines."""
    cells, lines, at, taken = [], text.split("\n"), 0, 0
    while at < len(lines):
        opened = _FENCE_OPEN.match(lines[at])
        if not opened:
            at += 1
            continue
        fence, engine, options = opened.groups()
        end = at + 1
        while end < len(lines) and not re.match(rf"^\s*{fence}`*\s*$", lines[end]):
            end += 1
        body = lines[at + 1:end]
        header = [line for line in body if line.strip().startswith("#|")]
        runs = (engine.lower() == "r" and not _EVAL_FALSE.search(options)
                and not any(_QUARTO_EVAL_FALSE.match(line) for line in header))
        if runs and any(line.strip() for line in body):
            gap = "\n" * (at + 1 - taken)  # blank lines up to the chunk: the document's line numbers kept
            cells.append(Cell(gap + "\n".join(body) + "\n", None))
            taken = end
        at = end + 1
    return cells


def chunk_lines(text: str) -> list[str]:
    """The lines inside every ``{r}`` chunk of an R Markdown or Quarto document, whether knitr runs it or not
    (``eval = FALSE``): what tells a document with no R code apart from one whose code does not run."""
    lines, found, at = text.split("\n"), [], 0
    while at < len(lines):
        opened = _FENCE_OPEN.match(lines[at])
        at += 1
        if not opened:
            continue
        fence, engine = opened.group(1), opened.group(2)
        while at < len(lines) and not re.match(rf"^\s*{fence}`*\s*$", lines[at]):
            if engine.lower() == "r":
                found.append(lines[at])
            at += 1
        at += 1
    return found


def r_cells(text: str, suffix: str) -> list[Cell]:
    """The cells to run for an R hand-in's text (raises NotebookError for a notebook nbformat cannot read)."""
    suffix = suffix.lower()
    if suffix == ".ipynb":
        return [Cell(source, number) for number, source in enumerate(code_cells(text)[0], start=1)]
    if suffix in MARKDOWN_SUFFIXES:
        return markdown_cells(text) or [Cell("\n", None)]
    return [Cell(text, None)]


def notes(cells: list[Cell]) -> list[Message]:
    """A note for R code that uses the torch package: question 1 is graded in base R, where torch is absent."""
    if any(_TORCH.search(cell.source) for cell in cells):
        return [Message("intake.r_torch")]
    return []


def sourced(cells: list[Cell]) -> list[str]:
    """The file names the cells ``source()`` from their own folder, in order, each once."""
    names = [m.group(1) for cell in cells for m in _SOURCE.finditer(cell.source)]
    return list(dict.fromkeys(names))


def helpers(cells: list[Cell], beside: dict[str, Callable[[], str]], limit: int) -> tuple[tuple[str, str], ...]:
    """The sourced R files found ``beside`` the graded one (name -> its decoded text), and what they source."""
    found: dict[str, str] = {}
    todo = sourced(cells)
    while todo and len(found) < limit:
        name = todo.pop(0)
        if name in found or name not in beside:
            continue
        found[name] = beside[name]()
        todo += [n for n in sourced([Cell(found[name], None)]) if n not in found]
    return tuple(found.items())


_NO_PACKAGE = re.compile(r"there is no package called .([A-Za-z0-9.]+)")


def hint(error: str) -> Message | None:
    """The hint for an error R raised (the runner names R's condition classes ``R.<class>``), or None."""
    package = _NO_PACKAGE.search(error)
    if package:
        return Message("hint.r_package", {"package": package.group(1)})
    if "non-conformable arrays" in error:
        return Message("hint.r_elementwise")
    if "non-conformable arguments" in error:
        return Message("hint.r_nonconformable")
    if "subscript out of bounds" in error:
        return Message("hint.r_subscript")
    if "cannot change working directory" in error:
        return Message("hint.r_setwd")
    if "Error in file(filename" in error and "cannot open the connection" in error:
        return Message("hint.r_source_missing")  # source()'s own call: a sourced file that was not handed in
    if "cannot open file" in error or "cannot open the connection" in error:
        return Message("hint.r_data_file")
    return None
