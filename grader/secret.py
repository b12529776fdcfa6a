"""The instructor's secret, and the seed of each student's hidden cases derived from it.

The secret is at least 128 random bits, written as hex, read from a file or the environment (never the
command line, which every user of the machine can read in ``/proc``). Each student's hidden cases come
from ``HMAC-SHA256(secret, identity)``, the identity being the batch row's name or, on Gradescope, the
submitters' ids: what one student learns of their own cases, even every number, says nothing about
another student's, and nothing about the secret (docs/instructors.md: "A secret").
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from grader.messages import Message

ENV = "GRADER_SECRET"  # hex, as in a secret file
MIN_BYTES = 16  # 128 bits: no search over them ends
NEW_BYTES = 32  # what ``new()`` draws


def new() -> str:
    """A fresh secret, as written into a file: hex digits and a newline."""
    return secrets.token_hex(NEW_BYTES) + "\n"


def parse(text: str, where: str) -> bytes:
    """The secret's bytes from its hex text; ``where`` names the file or variable in the refusal."""
    digits = "".join(text.split())
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        raise Message.error("secret.not_hex", where=where) from None
    if len(raw) < MIN_BYTES:
        raise Message.error("secret.too_short", where=where, bits=8 * len(raw), min_bits=8 * MIN_BYTES)
    return raw


def read(path: Path) -> bytes:
    try:
        text = path.read_text()
    except OSError as exc:
        raise Message.error("secret.unreadable", path=path, error=exc.strerror or exc) from None
    return parse(text, str(path))


def from_env(environ=os.environ) -> bytes | None:
    value = environ.get(ENV)
    return None if value is None else parse(value, ENV)


def case_seed(secret: bytes, identity: str) -> int:
    """The seed of one student's hidden cases: 256 bits numpy's Generator takes whole."""
    return int.from_bytes(hmac.new(secret, identity.encode("utf-8"), hashlib.sha256).digest(), "big")


def gradescope_identity(metadata: Path) -> str:
    """Who submitted, from Gradescope's submission_metadata.json: the users' ids (a group's, sorted), so
    that every submission of the same student gets the same cases; "" when the file says nothing."""
    try:
        data = json.loads(metadata.read_text())
        ids = sorted(str(user.get("id") or user.get("email") or "") for user in data.get("users") or [])
    except (OSError, ValueError, AttributeError):
        return ""
    return ",".join(i for i in ids if i)
