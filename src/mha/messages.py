"""The words students and page readers read, in Portuguese and English: catalogs as data, one message shape.

Each product keeps its catalog as a TOML file beside its code (``grader/messages.toml``,
``mha/report/messages.toml``): one table per message, holding one str.format template per language.
Dotted table names (``[detail.shape]``) are the keys, so a catalog may group its messages. A word that agrees
with a count is chosen in the template: ``{count} {count:|submissão|submissões}``.

A product binds a ``Message`` subclass to its catalog (``class Message(messages.Message): catalog =
CATALOG``). ``Message(key, values)`` is a verdict before it is worded: it is checked when it is made
(the key is in the catalog, the values are exactly the placeholders its text needs), and worded where it
is shown, ``message.text(language)``, with every number written in the language's notation (decimal comma,
thousands point, true minus sign in Portuguese). A value already turned into a string (a matrix entry
quoted as Python prints it) is left alone. The language is checked once, where it is chosen
(``check_language``). Errors for the person running the pipeline are not here: they are English
sentences written where they are raised.
"""

from __future__ import annotations

import math
import os
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from numbers import Real
from typing import ClassVar

LANGUAGES = ("en", "pt")
DEFAULT_LANGUAGE = "en"

# How a number formatted the Python way (1,234.5, -2) is written in each language.
NOTATION = {
    "en": str.maketrans({"-": "−"}),
    "pt": str.maketrans({",": ".", ".": ",", "-": "−"}),
}


def check_language(language: str, setting: str = "language") -> str:
    """``language`` if the catalogs have it; otherwise a ValueError naming the setting and the choices."""
    if language not in LANGUAGES:
        raise ValueError(f"{setting} is {language!r}; allowed: {', '.join(LANGUAGES)}")
    return language


def default_language(environ: Mapping[str, str] | None = None) -> str:
    """pt when LC_ALL, LC_MESSAGES or LANG (the first one set) says Portuguese, else en."""
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var, "")
        if value:
            return "pt" if value.lower().startswith("pt") else DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


def written(language: str, formatted: str) -> str:
    """A number already formatted by Python (``f"{x:,.2f}"``), in ``language``'s notation."""
    return formatted.translate(NOTATION[language])


def number(language: str, value: float, decimals: int = 4, signed: bool = False) -> str:
    """1234.5 -> '1,234.5000' (en) or '1.234,5000' (pt); signed adds '+'; a NaN or inf is left as Python writes it."""
    if not math.isfinite(value):
        return str(value)
    return written(language, f"{value:{'+' if signed else ''},.{decimals}f}")


def integer(language: str, value: float) -> str:
    return number(language, round(value), 0)


def percent(language: str, share: float, decimals: int = 0) -> str:
    return number(language, 100.0 * share, decimals) + "%"


def scientific(language: str, value: float) -> str:
    return written(language, f"{value:.1e}")


class _Formatter(string.Formatter):
    """str.format, with every number written in one language's notation, and a word chosen by a count:
    ``{count:|caso|casos}`` is "caso" when count is 1, else "casos" (``{n} {n:|cabeça|cabeças}``)."""

    def __init__(self, language: str):
        self.language = language

    def format_field(self, value, format_spec: str) -> str:
        if format_spec.startswith("|"):
            one, many = format_spec[1:].split("|")
            return one if value in (1, "1") else many
        formatted = super().format_field(value, format_spec)
        return written(self.language, formatted) if isinstance(value, Real) else formatted


FORMATTERS = {language: _Formatter(language) for language in LANGUAGES}


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _flatten(table: dict, prefix: str = "") -> dict[str, dict[str, str]]:
    """TOML tables to key -> language -> template: a table holding only language strings is a message."""
    entries = {}
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
            entries[key] = value
        elif isinstance(value, dict):
            entries |= _flatten(value, key + ".")
        else:
            raise ValueError(f"message catalog: {key} is {value!r}, not a table of one text per language")
    return entries


@dataclass(frozen=True)
class Catalog:
    """One product's messages: key -> language -> str.format template."""

    name: str
    entries: dict[str, dict[str, str]]

    @classmethod
    def load(cls, package: str, filename: str = "messages.toml") -> Catalog:
        """The catalog shipped as ``filename`` in ``package`` (package data, so it is in the wheel)."""
        source = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
        return cls(f"{package}/{filename}", _flatten(tomllib.loads(source)))

    def check(self, key: str, names: set[str]) -> None:
        """A KeyError unless ``key`` is here; a TypeError unless ``names`` are exactly its placeholders."""
        if key not in self.entries:
            raise KeyError(f"message {key!r} is not in the catalog {self.name}")
        needed = placeholders(self.entries[key][DEFAULT_LANGUAGE])
        if names != needed:
            missing, extra = sorted(needed - names), sorted(names - needed)
            raise TypeError(f"message {key!r} of {self.name} needs the values {sorted(needed)}; "
                            f"missing {missing}, not used {extra}")

    def problems(self) -> list[str]:
        """Every text missing or empty in a language, a language not in LANGUAGES, and every message whose
        placeholders differ between languages."""
        problems = []
        for key, texts in self.entries.items():
            missing = [language for language in LANGUAGES if not texts.get(language, "").strip()]
            problems += [f"message {key!r} has no {language!r} text" for language in missing]
            unknown = sorted(set(texts) - set(LANGUAGES))
            if unknown:
                problems.append(f"message {key!r} has texts in languages {unknown}; allowed: {', '.join(LANGUAGES)}")
            found = {language: placeholders(texts[language]) for language in LANGUAGES if language not in missing}
            if len({frozenset(names) for names in found.values()}) > 1:
                problems.append(f"message {key!r} has different placeholders per language: {found}")
        return problems


@dataclass(frozen=True)
class Message:
    """A verdict before it is worded: a key of the subclass's ``catalog`` and the values its text needs.

    Made, it is checked against the catalog; ``text(language)`` words it (a value that is itself a Message
    is worded first), and ``str()`` is its English text."""

    catalog: ClassVar[Catalog]  # each product's subclass sets its own
    key: str
    values: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.catalog.check(self.key, set(self.values))

    @classmethod
    def error(cls, key: str, /, **values) -> MessageError:
        """An exception carrying ``cls(key, values)``, to be worded in its reader's language."""
        return MessageError(cls(key, values))

    def text(self, language: str) -> str:
        values = {name: v.text(language) if isinstance(v, Message) else v for name, v in self.values.items()}
        return FORMATTERS[language].format(self.catalog.entries[self.key][language], **values)

    def __str__(self) -> str:
        return self.text(DEFAULT_LANGUAGE)


class MessageError(ValueError):
    """A refusal a student or an instructor reads, judged but not yet worded: ``message.text(language)``
    words it; ``str()`` is the English text."""

    def __init__(self, message: Message):
        super().__init__(str(message))
        self.message = message

    def text(self, language: str) -> str:
        return self.message.text(language)
