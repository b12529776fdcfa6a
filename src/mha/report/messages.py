"""The report's words: its catalog (``messages.toml`` beside this file), read through the shared layer.

``Messages(language)`` is the catalog in one language, with that language's number formats:
``t(key, **values)``, ``t.number(x)``, ``t.percent(share)``. The caller formats numbers first, so
that each language gets its own decimal separator; the lookup and the notation are ``mha.messages``'s.
"""

from __future__ import annotations

from mha.messages import LANGUAGES, Catalog, Translation
from mha.messages import check_language as _check_language

__all__ = ["CATALOG", "LANGUAGES", "Messages", "check_language"]

CATALOG = Catalog.load("mha.report")
SETTING = "report.language"  # where the report's language is chosen, as named in its errors


def check_language(language: str) -> str:
    return _check_language(language, SETTING)


class Messages(Translation):
    """The report's catalog in one language."""

    def __init__(self, language: str):
        super().__init__(CATALOG, check_language(language))
