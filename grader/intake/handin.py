"""One student's hand-in: the file that is graded, the helper modules beside it, and the notes on both.

A hand-in is a file (``.py``, ``.ipynb``, ``.zip``, or R's ``.R``, ``.Rmd``, ``.qmd``; any letter case) or a
folder holding one submission anywhere inside it. In a folder or a zip the graded file is the one that defines
most of the graded functions, question 2's ``MultiHeadAttention`` class and ``build_model`` among them (then:
named ``student``, nearest the top, a ``.py`` before a notebook, by name); the ``.py`` files beside it that it
imports are its helper modules (an R file's: the ``.R`` files it ``source()``s, ``grader.intake.r_source``).
Whatever cannot be read safely is refused with a reason.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.cases import FUNCTIONS
from grader.intake import archives, r_source
from grader.intake.decoding import decode_source
from grader.intake.names import shown
from grader.intake.notebooks import Cell, NotebookError, python_cells
from grader.intake.reading import DEFAULT_CAPS, Caps, Refused, kind_of, read_regular
from grader.messages import Message
from grader.module.contract import MODEL_FUNCTION, MODULE_CLASS, MODULE_NAMES

SUFFIXES = (".py", ".ipynb", ".zip", *r_source.R_SUFFIXES)
CODE_SUFFIXES = (".py", ".ipynb", *r_source.R_SUFFIXES)
# What a graded file defines: question 1's seven functions, or question 2's module class and model builder.
_DEFINES = {f: re.compile(rf"\bdef\s+{f}\b".encode() + b"|" + r_source.defines(f).pattern)
            for f in (*FUNCTIONS, MODEL_FUNCTION)}
_DEFINES[MODULE_CLASS] = re.compile(rf"\bclass\s+{MODULE_CLASS}\b".encode())
_MENTIONS = {f: re.compile(rf"\b{f}\b".encode()) for f in (*FUNCTIONS, *MODULE_NAMES)}
# Names a helper module may not take: the graded file's own, the grader's, and anything the child imports.
_RESERVED = {"student", "grader", "mha", "numpy", "torch", "matplotlib", *sys.stdlib_module_names}


@dataclass(frozen=True)
class HandIn:
    """What the sandbox runs: the graded file's cells, its helper modules, and notes for the student."""

    name: str  # the graded file as the student named it (inside their folder or zip), safe to show
    cells: tuple[Cell, ...]
    helpers: tuple[tuple[str, str], ...] = ()  # (module name, source)
    notes: tuple[Message, ...] = ()
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


@dataclass(frozen=True)
class _Candidate:
    path: PurePosixPath  # inside the student's folder or zip
    read: Callable[[], bytes]  # raises Refused


def open_path(path: Path, caps: Caps = DEFAULT_CAPS, siblings: bool = False) -> HandIn | Refusal:
    """The hand-in at ``path``: a file or a folder. ``siblings``: a lone file's neighbours may be its helper
    modules (a student grading their own file), never in a batch folder, where they are other students."""
    name = shown(path.name)
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return Refusal(name, Message("intake.unreadable", {"name": name, "error": exc.strerror or str(exc)}))
    kind = kind_of(mode)
    if kind == "directory":
        return _choose(*_walk(path, caps), name, caps)
    if kind != "file":
        return Refusal(name, Message(f"intake.{kind}", {"name": name}))
    candidates = [_Candidate(PurePosixPath(name), lambda: read_regular(path, caps.limit(path.suffix), name))]
    if siblings and path.suffix.lower() != ".zip":
        candidates += [c for c in _walk(path.parent, caps, depth=0)[0] if c.path.name != path.name]
        return _choose(candidates, [], name, caps, main=candidates[0])
    return _choose(candidates, [], name, caps)


def open_files(files: list[tuple[str, Path]], label: str, caps: Caps = DEFAULT_CAPS) -> HandIn | Refusal:
    """One student's several files at the top of a batch folder (Canvas and Moodle name each file after
    the student): the files as if in a folder of their own, each under its own name."""
    candidates = [_Candidate(PurePosixPath(name), lambda p=path, n=name: read_regular(p, caps.limit(p.suffix), n))
                  for name, path in ((shown(inner), path) for inner, path in files)]
    return _choose(candidates, [], label, caps)


def _walk(root: Path, caps: Caps, depth: int | None = None) -> tuple[list[_Candidate], list[Message]]:
    """The code files in a student's folder (links and special files included: reading refuses them)."""
    depth = caps.folder_depth if depth is None else depth
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
                if level < depth:
                    stack.append((Path(entry.path), inner, level + 1))
            elif Path(entry.name).suffix.lower() in SUFFIXES:
                path = Path(entry.path)
                found.append(_Candidate(inner, lambda p=path, n=str(inner): read_regular(p, caps.limit(p.suffix), n)))
    return found, []


def _expand(candidates: list[_Candidate], caps: Caps) -> tuple[list[_Candidate], list[Message], list[Refusal]]:
    """Zips replaced by the code files inside them (one level: a zip inside a zip is not opened)."""
    out, notes, refusals = [], [], []
    for cand in candidates:
        if cand.path.suffix.lower() != ".zip":
            out.append(cand)
            continue
        try:
            files, more = archives.code_files(cand.read(), str(cand.path), caps)
        except Refused as exc:
            refusals.append(Refusal(str(cand.path), exc.message))
            continue
        notes += more
        folder = cand.path.parent
        out += [_Candidate(folder / PurePosixPath(*map(shown, inner.parts)), lambda b=body: b)
                for inner, body in files.items()]
    return out, notes, refusals


def _score(cand: _Candidate, data: bytes) -> tuple:
    """Sort key of a candidate for the graded file: the best first."""
    defines = sum(1 for pattern in _DEFINES.values() if pattern.search(data))
    mentions = sum(1 for pattern in _MENTIONS.values() if pattern.search(data))
    return (-defines, -mentions, cand.path.stem.lower() != "student", len(cand.path.parts),
            cand.path.suffix.lower() != ".py", str(cand.path))


def _choose(candidates: list[_Candidate], notes: list[Message], label: str, caps: Caps,
            main: _Candidate | None = None) -> HandIn | Refusal:
    """The graded file among ``candidates`` (``main`` when given: the others are only its helpers)."""
    candidates, more, refusals = _expand(candidates, caps)
    notes = notes + more
    code = [c for c in candidates if c.path.suffix.lower() in CODE_SUFFIXES]
    read: dict[int, bytes] = {}
    for cand in [main] if main is not None else code:
        try:
            read[id(cand)] = cand.read()
        except Refused as exc:
            refusals.append(Refusal(str(cand.path), exc.message))
    readable = [c for c in code if id(c) in read]
    if main is not None:
        chosen = main if id(main) in read else None
    else:
        chosen = min(readable, key=lambda c: _score(c, read[id(c)]), default=None)
    if chosen is None:
        if refusals:
            return refusals[0]
        return Refusal(label, Message("intake.no_code", {"name": label}))
    name = str(chosen.path)
    notebook = chosen.path.suffix.lower() == ".ipynb"
    text, encoding_notes = decode_source(read[id(chosen)], name)
    language = "r" if r_source.is_r(chosen.path.suffix, text) else "python"
    beside = [c for c in code if c is not chosen and c.path.parent == chosen.path.parent]
    try:
        if language == "r":
            cells = r_source.r_cells(text, chosen.path.suffix)
            ipython = r_source.notes(cells)  # the language's own note (R's torch), where Python's are IPython's
        else:
            cells, ipython = python_cells(text, notebook)
    except NotebookError as exc:
        return Refusal(name, Message("intake.notebook_bad", {"name": name, "error": str(exc)}))
    if language == "r":
        helpers, helper_notes = _r_helpers(cells, beside, read, caps)
    else:
        helpers, helper_notes = _helpers(cells, beside, read, caps)
    notes = [*encoding_notes, *ipython, *notes]
    if main is None:
        used = {name for name, _ in helpers}  # module names (Python) or file names (R)
        others = [str(c.path) for c in readable if c is not chosen and not {c.path.stem, c.path.name} & used]
        if others:
            notes.append(Message("intake.chosen", {"name": name, "others": ", ".join(others[:5])}))
        if refusals:
            notes.append(Message("intake.ignored", {"names": ", ".join(r.name for r in refusals[:5])}))
    notes += helper_notes
    return HandIn(name, tuple(cells), helpers, tuple(notes), language)


def imported_names(cells: list[Cell]) -> set[str]:
    """The top-level module names the cells import (cells that do not parse import nothing)."""
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


def _r_helpers(cells: list[Cell], beside: list[_Candidate], read: dict[int, bytes],
               caps: Caps) -> tuple[tuple[tuple[str, str], ...], list[Message]]:
    """The R files beside the graded one that it ``source()``s, by file name (grader.intake.r_source)."""
    notes: list[Message] = []

    def reader(cand: _Candidate) -> Callable[[], str]:
        def text() -> str:
            try:
                data = read[id(cand)] if id(cand) in read else cand.read()
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
    return helpers, notes


def _helpers(cells: list[Cell], beside: list[_Candidate], read: dict[int, bytes],
             caps: Caps) -> tuple[tuple[tuple[str, str], ...], list[Message]]:
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
                data = read[id(cand)] if id(cand) in read else cand.read()
            except Refused as exc:
                refused.append(module)
                notes.append(exc.message)
                continue
            text, more = decode_source(data, str(cand.path))
            helpers[module] = text
            notes += more
            wanted |= imported_names([Cell(text, None)])
    if helpers:
        modules = ", ".join(f"{m}.py" for m in helpers)
        notes.append(Message("intake.helpers", {"count": len(helpers), "modules": modules}))
    return tuple(helpers.items()), notes
