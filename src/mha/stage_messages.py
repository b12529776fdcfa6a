"""What a pipeline stage script tells its user on stderr: one line, ``stage: text``, in the language of LANG.

The texts are in ``stage_messages.toml`` beside this file; the lookup is ``mha.messages``'s. What the
library raises or logs carries its own catalog's message (``mha.errors``, a ``Worded``) and is worded here
too; an exception without one (an OSError, a YAML error) is printed as it is.
"""

from __future__ import annotations

import sys

from mha.messages import Catalog, Message, Worded, default_language

CATALOG = Catalog.load("mha", "stage_messages.toml")


def wording(what: str | Worded | BaseException, language: str, /, **values) -> str:
    """A key's text, or a line's or an error's: its message worded in ``language`` if it has one, else its own
    text. A key's values that are Messages of this catalog, or Lines and errors of another, are worded first."""
    if isinstance(what, Worded):
        return what.text(language)
    if isinstance(what, BaseException):
        return str(what)
    values = {name: value.text(language) if isinstance(value, Worded) else value for name, value in values.items()}
    return CATALOG.render(language, Message(what, values))


def tell(stage: str, what: str | Worded | BaseException, /, file=None, **values) -> None:
    """Print ``stage: text`` on stderr (or ``file``), for a catalog key (with its values), a line or an error."""
    print(f"{stage}: {wording(what, default_language(), **values)}", file=file or sys.stderr)
