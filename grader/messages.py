"""The grader's words: its catalog (``messages.toml`` beside this file), in Portuguese and English.

Judging never writes prose: it returns ``Message(key, values)`` records, checked against the catalog when
they are made, and ``message.text(lang)`` words them once, at the end (a value that is itself a Message is
worded first). ``Message.error(key, **values)`` is an exception that the command line words in the language
of ``--lang``; ``text(lang, key, **values)`` words one key at once.
"""

from __future__ import annotations

from mha import messages
from mha.messages import LANGUAGES, Catalog, MessageError, default_language

__all__ = ["CATALOG", "LANGS", "Message", "MessageError", "default_lang", "text"]

LANGS = LANGUAGES
CATALOG = Catalog.load("grader")
default_lang = default_language


class Message(messages.Message):
    catalog = CATALOG


def text(lang: str, key: str, /, **values) -> str:
    return Message(key, values).text(lang)
