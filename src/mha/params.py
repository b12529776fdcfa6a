"""params.yaml read, and the rule its keys follow: the leaf under mha.schema, which imports nothing of mha.

`read(path)` reads the file as YAML; `check_keys` holds the one rule of every section and nested mapping:
every key is required and every unknown key is refused, so that a deleted or misspelt key stops the stage
instead of falling back on a value written somewhere else. Each problem is a ParamsError whose text is one line
naming the key; every stage script prints it and exits with EXIT_REFUSED (mha.stage). Which sections and keys
there are, and what their values may be, is mha.schema's.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

EXIT_REFUSED = 2  # every stage, for any problem with params.yaml or another input it cannot use


class ParamsError(ValueError):
    """A problem with params.yaml: one line that names the setting."""


def read(path: str | Path) -> Any:
    """The YAML document at ``path``, unchecked (mha.schema.load checks it)."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParamsError(f"{path} does not exist: run the stage from the project's folder, "
                          "where params.yaml is") from None
    except OSError as exc:
        raise ParamsError(f"{path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ParamsError(f"{path} is not UTF-8 text: save it as UTF-8") from None
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None


def section_of(params: Any, expected: Iterable[str], name: str = "params.yaml") -> None:
    """A ParamsError unless ``params`` is a mapping with exactly the sections ``expected``."""
    if not isinstance(params, dict):
        raise ParamsError(f"{name} must be a mapping of sections ({', '.join(expected)}), "
                          f"got {type(params).__name__}")
    check_keys(params, "", tuple(expected), what="section")


def section(params: dict, key: str) -> dict:
    """``params[key]``, which must be a mapping (a section, or a nested mapping such as lab.schedule)."""
    value = params.get(key) if isinstance(params, dict) else None
    if not isinstance(value, dict):
        raise ParamsError(f"{key}: must be a mapping of settings, got {value!r}")
    return value


def check_keys(values: dict, where: str, allowed: tuple[str, ...], *, required: bool = True,
               what: str = "setting") -> None:
    """A ParamsError naming the first key of ``values`` not in ``allowed`` (with the closest allowed one),
    then, when ``required``, the first key of ``allowed`` missing from ``values``."""
    prefix = f"{where}." if where else ""
    scope = where or "params.yaml"
    for key in values:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {prefix}{close[0]}?)" if close else ""
            raise ParamsError(f"{prefix}{key} is not a known {what}{hint}; {scope} has: {', '.join(allowed)}")
    if required:
        for key in allowed:
            if key not in values:
                raise ParamsError(f"{prefix}{key} is missing; {scope} needs: {', '.join(allowed)}")
