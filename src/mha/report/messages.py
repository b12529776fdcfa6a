"""The report's and the lab page's words: their catalog (``messages.toml`` beside this file).

``Message(key, values)`` is a sentence judged but not yet worded (the lab page's findings); ``Messages(language)``
words keys in one language, ``t(key, **values)``, with that language's number formats: ``t.number(x)``,
``t.percent(share)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha import messages
from mha.messages import LANGUAGES, Catalog

__all__ = ["CATALOG", "LANGUAGES", "Message", "Messages", "check_language"]

CATALOG = Catalog.load("mha.report")
SETTING = "report.language"  # where the report's language is chosen, as named in its errors


class Message(messages.Message):
    catalog = CATALOG


def check_language(language: str) -> str:
    return messages.check_language(language, SETTING)


@dataclass(frozen=True)
class Messages:
    """The catalog in one language, checked where the report's settings are read (ReportConfig)."""

    language: str

    def __call__(self, key: str, /, **values) -> str:
        return Message(key, values).text(self.language)

    def number(self, value: float, decimals: int = 4, signed: bool = False) -> str:
        return messages.number(self.language, value, decimals, signed)

    def integer(self, value: float) -> str:
        return messages.integer(self.language, value)

    def percent(self, share: float, decimals: int = 0) -> str:
        return messages.percent(self.language, share, decimals)

    def scientific(self, value: float) -> str:
        return messages.scientific(self.language, value)

    def exact(self, value: float) -> str:
        """Every digit Python writes (repr), in the language's notation: 0.001 -> '0,001' (pt)."""
        return messages.written(self.language, repr(value))
