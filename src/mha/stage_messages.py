"""What a pipeline stage script tells its user on stderr: one line, ``stage: text``, in the language of LANG.

The texts are in ``stage_messages.toml`` beside this file; the lookup is ``mha.messages``'s. Errors
raised deeper down (mha.train, mha.fetch, mha.report.inputs) are printed as they are unless they
carry a catalog message (``CATALOG.error``).
"""

from __future__ import annotations

import sys

from mha.messages import Catalog, MessageError, default_language

CATALOG = Catalog.load("mha", "stage_messages.toml")


def wording(what: str | BaseException, language: str, **values) -> str:
    """A key's text, or an error's: its message worded in ``language`` if it has one, else its own text."""
    if isinstance(what, MessageError):
        return what.text(language)
    if isinstance(what, BaseException):
        return str(what)
    return CATALOG.text(language, what, **values)


def tell(stage: str, what: str | BaseException, /, **values) -> None:
    """Print ``stage: text`` on stderr, for a catalog key (with its values) or an error."""
    print(f"{stage}: {wording(what, default_language(), **values)}", file=sys.stderr)
