"""The one message layer of both products: catalogs as data, one lookup, numbers written per language.

Each product keeps its catalog as a TOML file beside its code (``grader/messages.toml``,
``mha/report/messages.toml``, ``mha/stage_messages.toml``): one table per message, holding one
str.format template per language. Dotted table names (``[detail.shape]``) are the keys, so a
catalog may group its messages. ``Catalog.text`` is the one lookup; it refuses an unknown language
or key by name, and writes every number it is given in the language's notation (decimal comma,
thousands point, true minus sign in Portuguese). A value already turned into a string (a matrix
entry quoted as Python prints it) is left alone.
"""

from __future__ import annotations

import math
import os
import string
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from numbers import Real

LANGUAGES = ("en", "pt")
DEFAULT_LANGUAGE = "en"

# How a number formatted the Python way (1,234.5, -2) is written in each language.
NOTATION = {
    "en": str.maketrans({"-": "−"}),
    "pt": str.maketrans({",": ".", ".": ",", "-": "−"}),
}


@dataclass(frozen=True)
class Message:
    """A verdict before it is worded: a catalog key and the values its text needs."""

    key: str
    values: dict = field(default_factory=dict)


def check_language(language: str, setting: str = "language") -> str:
    """``language`` if the catalogs have it; otherwise a ValueError naming the setting and the choices."""
    if language not in LANGUAGES:
        raise ValueError(f"{setting} is {language!r}; allowed: {', '.join(LANGUAGES)}")
    return language


def default_language(environ: dict | None = None) -> str:
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
    """str.format, with every number written in one language's notation."""

    def __init__(self, language: str):
        self.language = language

    def format_field(self, value, format_spec: str) -> str:
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

    def text(self, language: str, key: str, /, **values) -> str:
        """The message ``key`` in ``language``, its placeholders filled from ``values``."""
        check_language(language)
        try:
            template = self.entries[key][language]
        except KeyError:
            raise KeyError(f"message {key!r} is missing from the {language!r} catalog ({self.name})") from None
        return FORMATTERS[language].format(template, **values)

    def render(self, language: str, message: Message) -> str:
        """The message's text in ``language``; values that are Messages are rendered first."""
        values = {k: self.render(language, v) if isinstance(v, Message) else v for k, v in message.values.items()}
        return self.text(language, message.key, **values)

    def error(self, key: str, /, **values) -> MessageError:
        """An exception carrying ``Message(key, values)``; ``str()`` of it is the English text."""
        return MessageError(self, Message(key, values))

    def line(self, key: str, /, **values) -> Line:
        """``Message(key, values)`` bound to this catalog, to be worded where it is shown."""
        return Line(self, Message(key, values))

    def problems(self) -> list[str]:
        """Every key missing from a language, and every message whose placeholders differ between languages."""
        problems = []
        for key, texts in self.entries.items():
            missing = [language for language in LANGUAGES if not texts.get(language, "").strip()]
            problems += [f"message {key!r} is missing from the {language!r} catalog" for language in missing]
            unknown = sorted(set(texts) - set(LANGUAGES))
            if unknown:
                problems.append(f"message {key!r} has texts in languages {unknown}; allowed: {', '.join(LANGUAGES)}")
            found = {language: placeholders(texts[language]) for language in LANGUAGES if language not in missing}
            if len({frozenset(names) for names in found.values()}) > 1:
                problems.append(f"message {key!r} has different placeholders per language: {found}")
        return problems


class Worded:
    """A catalog message not yet worded: ``text(language)`` words it; ``str()`` is the English text."""

    catalog: Catalog
    message: Message

    def text(self, language: str) -> str:
        return self.catalog.render(language, self.message)


@dataclass(frozen=True)
class Line(Worded):
    """A line to show (a log line, a stage's result), worded where it is shown: ``Catalog.line``."""

    catalog: Catalog
    message: Message

    def __str__(self) -> str:
        return self.text(DEFAULT_LANGUAGE)


class WordedError(Worded, Exception):
    """An exception carrying a catalog message; ``str()`` of it is the English text. Subclass it to keep
    an exception type callers catch (mha.fetch.FetchError); ``MessageError`` is the ValueError kind."""

    def __init__(self, catalog: Catalog, message: Message):
        super().__init__(catalog.render(DEFAULT_LANGUAGE, message))
        self.catalog, self.message = catalog, message


class MessageError(WordedError, ValueError):
    """A user's error, judged but not yet worded: ``text(language)`` words it, ``str()`` in English."""


class Translation:
    """A catalog in one language, with that language's number formats: ``t("key", x=1)``, ``t.number(0.5)``."""

    def __init__(self, catalog: Catalog, language: str):
        self.catalog, self.language = catalog, check_language(language)

    def __call__(self, key: str, /, **values) -> str:
        return self.catalog.text(self.language, key, **values)

    def number(self, value: float, decimals: int = 4, signed: bool = False) -> str:
        return number(self.language, value, decimals, signed)

    def integer(self, value: float) -> str:
        return integer(self.language, value)

    def percent(self, share: float, decimals: int = 0) -> str:
        return percent(self.language, share, decimals)

    def scientific(self, value: float) -> str:
        return scientific(self.language, value)
