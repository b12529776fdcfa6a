"""The grader's words: its catalog (``messages.toml`` beside this file), read through the shared layer.

Judging never writes prose: it returns ``Message(key, values)`` records, and ``render(lang, message)``
words them once, at the end (a value that is itself a Message is rendered first).
``text(lang, key, **params)`` renders one key; ``CATALOG.error(key, **params)`` is an exception that
the command line words in the language of ``--lang``. The lookup, the languages and the number
notation are ``mha.messages``'s.
"""

from __future__ import annotations

from mha.messages import LANGUAGES, Catalog, Message, MessageError, default_language

__all__ = ["CATALOG", "LANGS", "Message", "MessageError", "default_lang", "render", "text"]

LANGS = LANGUAGES
CATALOG = Catalog.load("grader")
default_lang = default_language
text = CATALOG.text
render = CATALOG.render
