"""Reading a stage's file back into its record, with one error that names the file, the field and what to do.

A record is a frozen dataclass whose field types say what the JSON holds: int, float (finite), str, bool,
``X | None``, ``list[X]``, ``tuple[X, ...]``, ``dict[str, X]``, ``Any`` or another record. `from_dict`
checks each field against its type, so a reader is one call (`JsonArtifact.read`); a record's own
`__post_init__` checks what types cannot say (a shape, a count) for its writer and its reader alike.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import MISSING, asdict, dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from mha.files import write_json

T = TypeVar("T")
SHOWN_CHARS = 60  # of a wrong value, in a message


class ArtifactError(ValueError):
    """A stage's input is missing or malformed; the message names the file, what is wrong and what to do."""


@dataclass(frozen=True)
class Source:
    """A file one stage wrote, as its reader names it in errors."""

    path: Path
    what: str  # e.g. "run record"
    producer: str  # the dvc stage that writes it

    def error(self, problem: str) -> ArtifactError:
        """The file is malformed: ``problem`` says how, e.g. "lacks results"."""
        return ArtifactError(f"{self.what} {self.path} {problem}: re-run `dvc repro {self.producer}`")

    def read_text(self) -> str:
        with self._reading():
            return Path(self.path).read_text(encoding="utf-8")

    def read_bytes(self) -> bytes:
        with self._reading():
            return Path(self.path).read_bytes()

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A missing, unreadable or undecodable file as an ArtifactError naming it and the stage to run."""
        try:
            yield
        except FileNotFoundError:
            raise ArtifactError(f"{self.what} {self.path} does not exist: run `dvc repro {self.producer}` first") \
                from None
        except UnicodeDecodeError as exc:
            raise self.error(f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise self.error(f"cannot be read ({exc.strerror})") from None

    def read_json(self) -> Any:
        text = self.read_text()
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise self.error(f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None


@dataclass(frozen=True)
class JsonArtifact(Generic[T]):
    """A JSON file that holds one record: its writer and its reader."""

    record: type[T]
    what: str  # how errors name the file
    producer: str = ""  # the dvc stage that writes it, where only one does

    def source(self, path: str | Path, producer: str = "") -> Source:
        return Source(Path(path), self.what, producer or self.producer)

    def write(self, path: str | Path, record: T) -> Path:
        """Sorted keys, written atomically (mha.files)."""
        return write_json(path, asdict(record))

    def read(self, path: str | Path, producer: str = "") -> T:
        """The record, every field checked; ``producer`` names the stage to re-run when that varies."""
        source = self.source(path, producer)
        return from_dict(self.record, source.read_json(), source)


def from_dict(cls: type[T], raw: Any, source: Source, where: str = "") -> T:
    if not isinstance(raw, dict):
        raise source.error(f"has {where or 'its top level'} = {shown(raw)}, expected a JSON object")
    hints = typing.get_type_hints(cls)
    values = {}
    for f in fields(cls):
        name = f"{where}{f.name}"
        if f.name in raw:
            values[f.name] = _checked(hints[f.name], raw[f.name], source, name)
        elif f.default is MISSING and f.default_factory is MISSING:
            raise source.error(f"lacks {name}")
    try:
        return cls(**values)
    except ValueError as exc:  # a record's own check
        raise source.error(f"is inconsistent: {exc}") from None


def _checked(tp: Any, raw: Any, source: Source, where: str) -> Any:
    """``raw`` if it is a ``tp``, with records built; else ArtifactError naming ``where``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return raw
    if origin in (types.UnionType, typing.Union):
        if raw is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _checked(inner, raw, source, where)
    if is_dataclass(tp):
        return from_dict(tp, raw, source, f"{where}.")
    if origin is list and isinstance(raw, list):
        return [_checked(args[0], item, source, f"{where}[{i}]") for i, item in enumerate(raw)]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis and isinstance(raw, list):  # tuple[X, ...]
        return tuple(_checked(args[0], item, source, f"{where}[{i}]") for i, item in enumerate(raw))
    if origin is dict and isinstance(raw, dict):
        return {key: _checked(args[1], value, source, f"{where}.{key}") for key, value in raw.items()}
    if tp is float and isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw):
        return raw
    if tp in (int, str, bool) and type(raw) is tp:
        return raw
    raise source.error(f"has {where} = {shown(raw)}, expected {_label(tp)}")


def _label(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if tp is float:
        return "a finite number"
    if origin in (list, tuple):
        return "a list"
    if origin is dict:
        return "a JSON object"
    return getattr(tp, "__name__", str(tp))


def shown(value: Any) -> str:
    """A wrong value as the file holds it (Python's repr), a long one cut to SHOWN_CHARS."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
