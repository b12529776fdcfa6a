"""The grader's words: its catalog (``messages.toml`` beside this file), in Portuguese and English.

Judging never writes prose: it returns ``Message(key, values)`` records, checked against the catalog when
they are made, and ``message.text(lang)`` words them once, at the end (a value that is itself a Message is
worded first). ``Message.error(key, **values)`` is an exception that the command line words in the language
of ``--lang``; ``text(lang, key, **values)`` words one key at once.
"""

from __future__ import annotations

from mha import messages
from mha.messages import LANGUAGES, Catalog, MessageError, default_language

__all__ = ["CATALOG", "LANGS", "Message", "MessageError", "default_lang", "mistake_named", "status_word", "text"]

LANGS = LANGUAGES
CATALOG = Catalog.load("grader")
default_lang = default_language


class Message(messages.Message):
    catalog = CATALOG


def text(lang: str, key: str, /, **values) -> str:
    return Message(key, values).text(lang)


def mistake_named(mistake: str) -> Message:
    """A mistake's id (kept as it is, the gradebook's and the docs' name) with its title in the reader's language:
    "missing-scale (escores sem escala)"."""
    return Message("mistake_named", {"id": mistake, "title": Message(f"mistake_title.{mistake}")})


def status_word(status: str) -> Message:
    """The gradebook's status (graded | refused | import failed | grader error) as a reader reads it."""
    return Message("status." + status.replace(" ", "_"))
