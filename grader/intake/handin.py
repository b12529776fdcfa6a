"""One student's hand-in: the file that is graded, the helper modules beside it, and the notes on both.

A hand-in is a file (``.py``, ``.ipynb``, ``.zip``, or R's ``.R``, ``.Rmd``, ``.qmd``; any letter case) or a
folder holding one submission anywhere inside it. In a folder or a zip the graded file is the one that defines
most of the graded functions, question 2's ``MultiHeadAttention`` class and ``build_model`` among them (then:
named ``student``, nearest the top, a ``.py`` before a notebook, by name); the ``.py`` files beside it that it
imports are its helper modules (an R file's: the ``.R`` files it ``source()``s, ``grader.intake.r_source``).
A lone file has no helpers but those named with it (``--helper``): its neighbours may be other students.
Candidates are read one at a time and scored on their code (a notebook's cells, not its JSON), keeping only
the best; every byte, file, zip and notebook cell counts against the student's totals.
Whatever cannot be read safely is refused with a reason.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from grader.functions.contract import FUNCTIONS
from grader.intake import archives, layouts, r_source
from grader.intake.decoding import decode_source
from grader.intake.names import shown
from grader.intake.notebooks import Cell, NotebookError, code_cells, python_cells
from grader.intake.reading import (
    DEFAULT_CAPS,
    Caps,
    PastTotals,
    Refused,
    Tally,
    kind_of,
    mib,
    open_regular,
    read_regular,
)
from grader.messages import Message
from grader.module.contract import MODEL_FUNCTION, MODULE_CLASS, MODULE_NAMES

SUFFIXES = (".py", ".ipynb", ".zip", *r_source.R_SUFFIXES)
CODE_SUFFIXES = (".py", ".ipynb", *r_source.R_SUFFIXES)
# Names a helper module may not take: the graded file's own, the grader's, and anything the child imports.
_RESERVED = {"student", "grader", "mha", "numpy", "torch", "matplotlib", *sys.stdlib_module_names}


# What a graded file defines (question 1's seven functions, or question 2's module class and model builder), and
# the names it mentions: how the graded file is told from its helpers.
_DEFINES = [*(re.compile(rf"\bdef\s+{f}\b|" + r_source.defines(f).pattern.decode())
              for f in (*FUNCTIONS, MODEL_FUNCTION)), re.compile(rf"\bclass\s+{MODULE_CLASS}\b")]
_MENTIONS = [re.compile(rf"\b{f}\b") for f in (*FUNCTIONS, *MODULE_NAMES)]


@dataclass(frozen=True)
class HandIn:
    """What the sandbox runs: the graded file's cells, its helper modules, and notes for the student."""

    name: str  # the graded file as the student named it (inside their folder or zip), safe to show
    cells: tuple[Cell, ...]
    helpers: tuple[tuple[str, str], ...] = ()  # (module name, source)
    notes: tuple[Message, ...] = ()
    seconds: float = 0.0  # what reading it took (grader.intake.bounded), counted in the submission's budget
    language: str = "python"  # or "r" (grader.intake.r_source)

    @property
    def notebook(self) -> bool:
        return any(cell.number is not None for cell in self.cells)

    def sources(self) -> list[str]:
        return [c.source if c.source.endswith("\n") else c.source + "\n" for c in self.cells]

    def source(self) -> str:
        """The file the sandbox writes: the cells one after another, so that line numbers match."""
        return "".join(self.sources())

    def first_lines(self) -> list[int]:
        """The line of ``source()`` on which each cell starts."""
        starts, line = [], 1
        for text in self.sources():
            starts.append(line)
            line += text.count("\n")
        return starts

    def place(self, line: int | None) -> tuple[int | None, int | None]:
        """(cell number, line in that cell) of a line of ``source()``; (None, line) for a .py file."""
        if line is None or not self.notebook:
            return None, line
        for cell, start in reversed(list(zip(self.cells, self.first_lines(), strict=True))):
            if line >= start:
                return cell.number, line - start + 1
        return None, line


@dataclass(frozen=True)
class Refusal:
    """A hand-in that is not graded; ``message`` says why and what to do."""

    name: str
    message: Message
    seconds: float = 0.0  # what reading it took, as for HandIn


@dataclass(frozen=True)
class _Candidate:
    path: PurePosixPath  # inside the student's folder or zip
    read: Callable[[], bytes]  # raises Refused
    open: Callable[[], BinaryIO] | None = None  # a file on disk, opened as a stream (a zip is read so)


@dataclass(frozen=True)
class _Code:
    """A candidate read: its code as Python will see it (a notebook's code cells), and the notes on it."""

    sources: list[str]
    notebook: bool
    notes: list[Message]
    language: str = "python"  # or "r": by the extension, or a notebook's metadata


def _file(path: Path, name: str, caps: Caps, tally: Tally) -> _Candidate:
    def read() -> bytes:
        data = read_regular(path, caps.limit(path.suffix), name)
        tally.read(len(data))
        return data

    return _Candidate(PurePosixPath(name), read, lambda: open_regular(path, caps.limit(path.suffix), name))


def open_path(path: Path, caps: Caps = DEFAULT_CAPS, helpers: tuple[Path, ...] = (),
              neighbours: bool = False) -> HandIn | Refusal:
    """The hand-in at ``path``: a file or a folder. ``helpers``: files its imports may load as helper modules
    (a student grading their own file names them). ``neighbours`` (a lone file graded on its own, never a batch's
    entry): a file beside it that it imports or ``source()``s by name is taken as its helper when it is no
    hand-in itself (``_neighbours``); a neighbour that is one is never taken, and the note says how to hand in
    a helper."""
    name = shown(path.name)
    tally = Tally(caps)
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return Refusal(name, Message("intake.unreadable", {"name": name, "error": exc.strerror or str(exc)}))
    kind = kind_of(mode)
    if kind == "directory":
        return _choose(*_walk(path, caps, tally), name, caps, tally)
    if kind != "file":
        return Refusal(name, Message(f"intake.{kind}", {"name": name}))
    candidates = [_file(path, name, caps, tally)]
    if path.suffix.lower() == ".zip":
        return _choose(candidates, [], name, caps, tally)
    notes: list[Message] = []
    refused: set[str] = set()
    if neighbours and not helpers:
        helpers, notes, refused = _neighbours(path, candidates[0], caps)
    if not helpers and not notes:
        return _choose(candidates, [], name, caps, tally)
    candidates += [_file(h, shown(h.name), caps, tally) for h in helpers if shown(h.name) != name]
    result = _choose(candidates, [], name, caps, tally, main=candidates[0])
    if isinstance(result, Refusal):
        return result
    # Each neighbour's own note says it all: not "helper loaded" again, nor "not handed in" for one not taken.
    said = {"intake.helpers"} if any(n.key == "intake.helper_beside" for n in notes) else set()
    kept = [n for n in result.notes if n.key not in said
            and not (n.key == "intake.source_missing" and n.values["file"] in refused)]
    return replace(result, notes=(*kept, *notes))


def _neighbours(path: Path, main: _Candidate, caps: Caps) -> tuple[tuple[Path, ...], list[Message], set[str]]:
    """The files beside a lone file that it imports (``utils.py`` for ``from utils import f``) or ``source()``s
    (``source("utils.R")``), taken as its helpers when they are no hand-in of their own: each defines none of
    the graded functions and is not named as an LMS names a student's file. A neighbour that is a hand-in (the
    round-3 attack: ``from alice import *`` beside alice.py) is never taken. Returns the helpers, a note for
    each neighbour looked at, and the names of those not taken."""
    look = Tally(caps)  # a first look at the main file only: _choose reads it again on the student's totals
    try:
        code = _read_code(main, look)
    except Refused:
        return (), [], set()  # _choose refuses it with the reason
    if code.language == "r":
        cells = ([Cell(source, None) for source in code.sources] if code.notebook
                 else r_source.r_cells(code.sources[0], path.suffix))
        wanted = r_source.sourced(cells)
    else:
        names = imported_names([Cell(source, None) for source in code.sources])
        wanted = [f"{n}.py" for n in sorted(names) if n.isidentifier() and n not in _RESERVED]
    taken, notes, refused = [], [], set()
    for file in wanted[: caps.helpers]:
        beside = path.parent / file
        if beside.name == path.name:
            continue
        try:
            if kind_of(os.lstat(beside).st_mode) != "file":
                continue
            text, _ = decode_source(read_regular(beside, caps.limit(beside.suffix), file), file)
        except (OSError, Refused):
            continue  # not there (the load says what is missing), or unreadable: never taken
        if any(p.search(text) for p in _DEFINES) or layouts.parse(file, False).lms != "plain":
            refused.add(file)
            notes.append(Message("intake.helper_refused", {"file": shown(file)}))
        else:
            taken.append(beside)
            notes.append(Message("intake.helper_beside", {"file": shown(file)}))
    return tuple(taken), notes, refused


def open_files(files: list[tuple[str, Path]], label: str, caps: Caps = DEFAULT_CAPS) -> HandIn | Refusal:
    """One student's several files at the top of a batch folder (Canvas and Moodle name each file after
    the student): the files as if in a folder of their own, each under its own name."""
    tally = Tally(caps)
    return _choose([_file(path, shown(inner), caps, tally) for inner, path in files], [], label, caps, tally)


def _walk(root: Path, caps: Caps, tally: Tally) -> tuple[list[_Candidate], list[Message]]:
    """The code files in a student's folder (links and special files included: reading refuses them)."""
    found: list[_Candidate] = []
    stack = [(root, PurePosixPath(), 0)]
    seen = 0
    while stack:
        folder, rel, level = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > caps.folder_entries:
                return found, [Message("intake.folder_truncated", {"limit": caps.folder_entries})]
            if entry.name.startswith(".") or entry.name in ("__MACOSX", "__pycache__"):
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            inner = rel / shown(entry.name)
            if kind_of(mode) == "directory":
                if level < caps.folder_depth:
                    stack.append((Path(entry.path), inner, level + 1))
            elif Path(entry.name).suffix.lower() in SUFFIXES:
                found.append(_file(Path(entry.path), str(inner), caps, tally))
    return found, []


def _expand(candidates: list[_Candidate], caps: Caps,
            tally: Tally) -> tuple[list[_Candidate], list[Message], list[Refusal]]:
    """Zips replaced by the code files inside them (one level: a zip inside a zip is not opened), each
    unpacked only when it is read."""
    out, notes, refusals = [], [], []
    for cand in candidates:
        if cand.path.suffix.lower() != ".zip":
            out.append(cand)
            continue
        try:
            members, more = archives.code_members(cand.open(), str(cand.path), caps, tally)
        except PastTotals:
            raise
        except Refused as exc:
            refusals.append(Refusal(str(cand.path), exc.message))
            continue
        notes += more
        folder = cand.path.parent
        out += [_Candidate(folder / PurePosixPath(*map(shown, inner.parts)), read) for inner, read in members]
    return out, notes, refusals


def blank(source: str) -> bool:
    """Code with nothing to run: only blank lines and comments (``#`` starts one in Python and in R)."""
    return all(not line.strip() or line.lstrip().startswith("#") for line in source.splitlines())


def _empty(cells: list[Cell], read: _Code, suffix: str) -> bool:
    """Nothing to run in the graded file: no cell with code (an R Markdown document's chunks that knitr skips,
    ``eval = FALSE``, count as code: that document is not empty, its code does not run)."""
    if not all(blank(cell.source) for cell in cells):
        return False
    if suffix.lower() in r_source.MARKDOWN_SUFFIXES and not read.notebook:
        return blank("\n".join(r_source.chunk_lines(read.sources[0])))
    return True


def _read_code(cand: _Candidate, tally: Tally) -> _Code:
    """A candidate's code: its bytes decoded, a notebook's code cells taken out (``Refused`` when it cannot be
    read); the bytes themselves are not kept. A file of nothing but whitespace is code with nothing in it,
    whatever its extension (a 0-byte notebook is an empty file, not a damaged notebook)."""
    name = str(cand.path)
    text, notes = decode_source(cand.read(), name)
    language = "r" if r_source.is_r(cand.path.suffix, text) else "python"
    if not text.strip():
        return _Code([text], False, notes, "r" if cand.path.suffix.lower() in r_source.R_SUFFIXES else "python")
    if cand.path.suffix.lower() != ".ipynb":
        return _Code([text], False, notes, language)
    try:
        sources, cells = code_cells(text)
    except NotebookError as exc:
        raise Refused(Message("intake.notebook_bad", {"name": name, "error": str(exc)})) from None
    tally.notebook(cells)
    return _Code(sources, True, notes, language)


def _score(cand: _Candidate, code: str) -> tuple:
    """Sort key of a candidate for the graded file, from its code: the best first."""
    defines = sum(1 for pattern in _DEFINES if pattern.search(code))
    mentions = sum(1 for pattern in _MENTIONS if pattern.search(code))
    return (-defines, -mentions, blank(code), cand.path.stem.lower() != "student", len(cand.path.parts),
            cand.path.suffix.lower() != ".py", str(cand.path))


def _choose(candidates: list[_Candidate], notes: list[Message], label: str, caps: Caps, tally: Tally,
            main: _Candidate | None = None) -> HandIn | Refusal:
    """The graded file among ``candidates`` (``main`` when given: the others are only its helpers); whatever
    cannot be read, or is past the student's totals, refused with the reason."""
    name = label
    try:
        candidates, more, refusals = _expand(candidates, caps, tally)
        code = [c for c in candidates if c.path.suffix.lower() in CODE_SUFFIXES]
        best, readable = _best([main] if main is not None else code, tally, refusals)
        if best is None:
            return refusals[0] if refusals else Refusal(label, Message("intake.no_code", {"name": label}))
        chosen, read = best
        name = str(chosen.path)
        cells, language_notes = _cells(read, chosen, name, caps)
        if _empty(cells, read, chosen.path.suffix):  # one reason, said once, instead of seven "does not define"
            return Refusal(name, Message("intake.empty", {"name": name}))
        beside = [c for c in code if c is not chosen and c.path.parent == chosen.path.parent]
        if read.language == "r":
            helpers, helper_notes = _r_helpers(cells, beside, caps)
        else:
            helpers, helper_notes = _helpers(cells, beside, caps, tally)
    except Refused as exc:
        return Refusal(name, exc.message)
    except RecursionError:  # an expression nested deeper than Python's own compiler goes
        return Refusal(name, Message("intake.too_complex", {"name": name}))
    too_big = _too_big(cells, helpers, name, caps)
    if too_big is not None:
        return too_big
    notes = [*read.notes, *language_notes, *notes, *more]
    if main is None:
        notes += _choice_notes(name, chosen, readable, helpers, refusals)
    notes += helper_notes
    return HandIn(name, tuple(cells), helpers, tuple(notes), language=read.language)


def _best(candidates: list[_Candidate], tally: Tally,
          refusals: list[Refusal]) -> tuple[tuple[_Candidate, _Code] | None, list[_Candidate]]:
    """The best of ``candidates`` for the graded file (``_score``) with its code, and those that could be read.
    They are read one at a time and only the best so far is kept; each that cannot be read joins ``refusals``,
    but past the student's totals the whole hand-in is refused (``PastTotals``)."""
    best: tuple[tuple, _Candidate, _Code] | None = None
    readable: list[_Candidate] = []
    for cand in candidates:
        try:
            read = _read_code(cand, tally)
        except PastTotals:
            raise
        except Refused as exc:
            refusals.append(Refusal(str(cand.path), exc.message))
            continue
        readable.append(cand)
        key = _score(cand, "\n".join(read.sources))
        if best is None or key < best[0]:
            best = (key, cand, read)
    return (None if best is None else best[1:]), readable


def _cells(read: _Code, chosen: _Candidate, name: str, caps: Caps) -> tuple[list[Cell], list[Message]]:
    """The graded file's code as cells, and its language's own notes on them (IPython's rewrites in Python, R's
    torch in R)."""
    if read.language != "r":
        return python_cells(read.sources, read.notebook, name, caps.ipython_lines)
    if read.notebook:
        cells = [Cell(source, number) for number, source in enumerate(read.sources, start=1)]
    else:
        cells = r_source.r_cells(read.sources[0], chosen.path.suffix)
    return cells, r_source.notes(cells)


def _too_big(cells: list[Cell], helpers: tuple[tuple[str, str], ...], name: str, caps: Caps) -> Refusal | None:
    """The refusal of a graded file whose code and helper modules together are past ``Caps.code_bytes``."""
    size = sum(len(c.source.encode()) for c in cells) + sum(len(s.encode()) for _, s in helpers)
    if size <= caps.code_bytes:
        return None
    return Refusal(name, Message("intake.code_too_big", {"name": name, "size": mib(size),
                                                         "limit": mib(caps.code_bytes)}))


def _choice_notes(name: str, chosen: _Candidate, readable: list[_Candidate], helpers: tuple[tuple[str, str], ...],
                  refusals: list[Refusal]) -> list[Message]:
    """What the student is told of the choice: the other files that were not graded (but as helpers), and those
    that could not be read."""
    notes = []
    used = {module for module, _ in helpers}  # module names (Python) or file names (R)
    others = [str(c.path) for c in readable if c is not chosen and not {c.path.stem, c.path.name} & used]
    if others:
        notes.append(Message("intake.chosen", {"name": name, "others": ", ".join(others[:5])}))
    if refusals:
        notes.append(Message("intake.ignored", {"names": ", ".join(r.name for r in refusals[:5])}))
    return notes


def imported_names(cells: list[Cell]) -> set[str]:
    """The top-level module names the cells import (cells that do not parse import nothing; RecursionError
    for one nested deeper than Python's compiler goes)."""
    names: set[str] = set()
    for cell in cells:
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.level > 0:  # from .utils import x, as in a package
                names.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
    return names


def _helpers(cells: list[Cell], beside: list[_Candidate], caps: Caps,
             tally: Tally) -> tuple[tuple[tuple[str, str], ...], list[Message]]:
    """The .py files beside the graded one that it imports (and that they import), as module sources;
    each read only when imported."""
    modules = {c.path.stem: c for c in beside if c.path.suffix.lower() == ".py" and c.path.stem.isidentifier()
               and c.path.stem not in _RESERVED}
    wanted, helpers, notes, refused = imported_names(cells), {}, [], []
    while len(helpers) < caps.helpers:
        todo = sorted(n for n in wanted if n in modules and n not in helpers and n not in refused)
        if not todo:
            break
        for module in todo[: caps.helpers - len(helpers)]:
            cand = modules[module]
            try:
                text, more = decode_source(cand.read(), str(cand.path))
            except PastTotals:
                raise
            except Refused as exc:
                refused.append(module)
                notes.append(exc.message)
                continue
            helpers[module] = text
            notes += more
            wanted |= imported_names([Cell(text, None)])
    if helpers:
        modules = ", ".join(f"{m}.py" for m in helpers)
        notes.append(Message("intake.helpers", {"count": len(helpers), "modules": modules}))
    return tuple(helpers.items()), notes


def _r_helpers(cells: list[Cell], beside: list[_Candidate],
               caps: Caps) -> tuple[tuple[tuple[str, str], ...], list[Message]]:
    """The R files beside the graded one that it ``source()``s, by file name (grader.intake.r_source); each
    read only when sourced, counted in the student's totals."""
    notes: list[Message] = []

    def reader(cand: _Candidate) -> Callable[[], str]:
        def text() -> str:
            try:
                data = cand.read()
            except PastTotals:
                raise
            except Refused as exc:
                notes.append(exc.message)
                return ""
            decoded, more = decode_source(data, str(cand.path))
            notes.extend(more)
            return decoded
        return text

    files = {c.path.name: reader(c) for c in beside if c.path.suffix.lower() == ".r"}
    helpers = r_source.helpers(cells, files, caps.helpers)
    if helpers:
        notes.append(Message("intake.helpers", {"count": len(helpers), "modules": ", ".join(n for n, _ in helpers)}))
    found = {n for n, _ in helpers}
    notes += [Message("intake.source_missing", {"file": shown(n)}) for n in r_source.sourced(cells) if n not in found]
    return helpers, notes
