"""``tell(stage, what)``: one line, ``stage: text``, on stderr, for the stage scripts that word their lines
from ``stage_messages.toml`` in the language of LANG. A key of that catalog is worded with its values; a
message or an error of another catalog in its own words; anything else (an exception, a plain English
line from the library) is printed as it is."""

from __future__ import annotations

import sys

from mha.messages import Catalog, Message, MessageError, default_language


class StageMessage(Message):
    catalog = Catalog.load("mha", "stage_messages.toml")


CATALOG = StageMessage.catalog


def wording(what: object, language: str, /, **values) -> str:
    if isinstance(what, (Message, MessageError)):
        return what.text(language)
    if not (isinstance(what, str) and what in CATALOG.entries):
        return str(what)
    values = {name: wording(StageMessage(v.key, v.values) if type(v) is Message else v, language)
              if isinstance(v, (Message, MessageError)) else v for name, v in values.items()}
    return StageMessage(what, values).text(language)


def tell(stage: str, what: object, /, file=None, **values) -> None:
    """Print ``stage: text`` on stderr (or ``file``)."""
    print(f"{stage}: {wording(what, default_language(), **values)}", file=file or sys.stderr)
