"""The grader's words: its catalog (``messages.toml`` beside this file), in Portuguese and English.

Judging never writes prose: it returns ``Message(key, values)`` records, checked against the catalog when
they are made, and ``message.text(lang)`` words them once, at the end (a value that is itself a Message is
worded first). ``Message.error(key, **values)`` is an exception that the command line words in the language
of ``--lang``; ``text(lang, key, **values)`` words one key at once.

A message is also worded in the notation of the hand-in's language (``NOTATIONS``): an R student reads R's
code and values (``causal = TRUE``, ``NaN``, ``-Inf``, ``t()``, dimensions as ``3 x 4``), a Python student
Python's. ``message.text(lang, "r")`` takes the catalog's R variant of a key where it has one (``detail_r.shape``
for ``detail.shape``: the first part of the key with ``_r``, the same placeholders), and words the values that
are written differently (``Shape``, ``Arguments``, a NaN or an infinity) in R's notation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mha import messages
from mha.messages import FORMATTERS, LANGUAGES, Catalog, MessageError, default_language

__all__ = ["CATALOG", "LANGS", "NOTATIONS", "Arguments", "Item", "Message", "MessageError", "Shape", "default_lang",
           "mistake_named", "notated_key", "notation_of", "status_word", "text"]

LANGS = LANGUAGES
CATALOG = Catalog.load("grader")
# A hand-in's language (grader.intake.HandIn.language) is its reader's notation; "rmd" is R's in a document made of
# chunks (.Rmd, .qmd), the only one whose advice may speak of chunks. Each notation's variants, nearest first.
NOTATIONS = ("python", "r", "rmd")
_VARIANTS = {"python": (), "r": ("r",), "rmd": ("rmd", "r")}
default_lang = default_language


def notation_of(language: str | None, name: str = "") -> str:
    """The notation a hand-in's reader reads: R's for an R hand-in (``rmd`` for an R Markdown or Quarto document
    named ``name``), Python's for everything else."""
    if language != "r":
        return "python"
    return "rmd" if name.lower().endswith((".rmd", ".qmd")) else "r"


def notated_key(key: str, notation: str) -> str:
    """The catalog's variant of ``key`` for ``notation`` (``detail.shape`` -> ``detail_r.shape``) where it has
    one, else ``key`` itself."""
    head, _, rest = key.partition(".")
    for suffix in _VARIANTS[notation]:
        variant = f"{head}_{suffix}.{rest}"
        if variant in CATALOG.entries:
            return variant
    return key


class _RSpecial:
    """A NaN or an infinity as R prints it (NaN, Inf, -Inf), whatever number format the template asks for."""

    def __init__(self, value: float):
        self.value = value

    def __format__(self, spec: str) -> str:
        if math.isnan(self.value):
            return "NaN"
        return "Inf" if self.value > 0 else "-Inf"


@dataclass(frozen=True)
class Shape:
    """An array's dimensions: ``(3, 4)`` and ``(2,)`` in Python's notation; ``3 x 4`` and "a vector of length 2"
    in R's (as R's ``dim()`` and ``length()`` give them)."""

    dims: tuple[int, ...]

    def notated(self, language: str, notation: str) -> str:
        if notation == "python":
            return str(tuple(self.dims))
        if len(self.dims) == 1:
            return Message("shape.vector", {"length": self.dims[0]}).text(language, notation)
        if not self.dims:
            return Message("shape.number").text(language, notation)
        return " x ".join(str(d) for d in self.dims)


@dataclass(frozen=True)
class Arguments:
    """A call's arguments by name, as a case's label shows them: ``n=3, causal=True`` in Python's notation,
    ``n = 3, causal = TRUE`` in R's."""

    values: tuple[tuple[str, object], ...]

    def notated(self, language: str, notation: str) -> str:
        if notation == "python":
            return ", ".join(f"{k}={v}" for k, v in self.values)
        return ", ".join(f"{k} = {_r_literal(v)}" for k, v in self.values)


@dataclass(frozen=True)
class Item:
    """One item of a list of matrices, counted from 1 as the course counts heads: ``W_Q[1]`` in Python's notation
    (the course's numbering), ``W_Q[[1]]`` in R's (R's own)."""

    name: str
    index: int

    def notated(self, language: str, notation: str) -> str:
        return f"{self.name}[{self.index}]" if notation == "python" else f"{self.name}[[{self.index}]]"


def _r_literal(value: object) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)


def _notated(value: object, language: str, notation: str) -> object:
    if isinstance(value, Message):
        return value.text(language, notation)
    if isinstance(value, (Shape, Arguments, Item)):
        return value.notated(language, notation)
    if notation != "python" and isinstance(value, float) and not math.isfinite(value):
        return _RSpecial(value)
    return value


class Message(messages.Message):
    catalog = CATALOG

    def text(self, language: str, notation: str = "python") -> str:
        """Worded in ``language``, in the notation of the reader's language (``NOTATIONS``)."""
        values = {name: _notated(v, language, notation) for name, v in self.values.items()}
        return FORMATTERS[language].format(self.catalog.entries[notated_key(self.key, notation)][language], **values)


def text(lang: str, key: str, /, **values) -> str:
    return Message(key, values).text(lang)


def mistake_named(mistake: str) -> Message:
    """A mistake's id (kept as it is, the gradebook's and the docs' name) with its title in the reader's language:
    "missing-scale (escores sem escala)"."""
    return Message("mistake_named", {"id": mistake, "title": Message(f"mistake_title.{mistake}")})


def status_word(status: str) -> Message:
    """The gradebook's status (graded | refused | import failed | grader error) as a reader reads it."""
    return Message("status." + status.replace(" ", "_"))
