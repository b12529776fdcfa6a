"""Source bytes to text the way Python reads a file, plus what Windows editors write.

UTF-8 with or without a BOM and a PEP 263 coding line are Python's own rules (``tokenize.detect_encoding``);
UTF-16 with a BOM (PowerShell's ``>``) is decoded too. Anything else that is not valid UTF-8 is read as
cp1252 (latin-1 for the five bytes cp1252 leaves undefined), with a note asking to save as UTF-8. A coding
line that names something other than a character set (``punycode``, ``unicode_escape``, ``rot13``: codecs
that rewrite text, some slow on purpose-made input) is refused with the reason.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize

from grader.intake.reading import Refused
from grader.messages import Message

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# Character sets, by the names codecs.lookup gives them: what an editor saves a file in.
_CHARSETS = re.compile(r"(utf-(8|16|32)(-sig|-le|-be)?|ascii|iso8859-\d+|cp\d+|mac-[a-z]+|koi8-[a-z]+|gb\w*|big5\w*"
                       r"|shift_jis\w*|euc_\w+|iso2022_\w+|johab|hz|kz1048|ptcp154|tis-620|latin-1)")


def decode_source(data: bytes, name: str) -> tuple[str, list[Message]]:
    """The text of a source file and the notes its encoding deserves; newlines become ``\\n``."""
    notes: list[Message] = []
    if data.startswith(_UTF16_BOMS):
        try:
            return _newlines(data.decode("utf-16")), notes
        except UnicodeDecodeError:
            pass
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown coding line: fall back like any undecodable file
        encoding = "utf-8"
    if not _CHARSETS.fullmatch(codecs.lookup(encoding).name):
        raise Refused(Message("intake.coding", {"name": name, "encoding": encoding[:40]}))
    try:
        return _newlines(data.decode(encoding)), notes
    except UnicodeError as exc:
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
    try:
        text, used = data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        text, used = data.decode("latin-1"), "latin-1"
    notes.append(Message("intake.not_utf8", {"name": name, "line": line, "encoding": used}))
    return _newlines(text), notes


def _newlines(text: str) -> str:
    """Windows and old Mac line ends as Python's universal newlines read them; a leading BOM dropped."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
