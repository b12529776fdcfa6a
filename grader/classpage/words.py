"""The class page's words: its catalog (``messages.toml`` beside this file) in one language, with that language's
number formats, as ``t(key, **values)``, ``t.number(x)``, ``t.percent(share)``."""

from __future__ import annotations

from dataclasses import dataclass

from mha import messages
from mha.messages import Catalog

CATALOG = Catalog.load("grader.classpage")


class Message(messages.Message):
    catalog = CATALOG


@dataclass(frozen=True)
class Words:
    language: str

    def __post_init__(self) -> None:
        messages.check_language(self.language, "--lang")

    def __call__(self, key: str, /, **values) -> str:
        return Message(key, values).text(self.language)

    def number(self, value: float, decimals: int = 1) -> str:
        """At most ``decimals`` decimals, none for a whole number: 30 -> '30', 22.5 -> '22,5' (pt)."""
        rounded = round(float(value), decimals)
        if rounded.is_integer():
            return messages.integer(self.language, rounded)
        return messages.number(self.language, rounded, decimals).rstrip("0")

    def percent(self, share: float) -> str:
        return messages.percent(self.language, share)
