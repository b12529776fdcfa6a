"""params.yaml, the pipeline's one source of values: read once, every key of every section checked.

`load(path)` reads the file and checks its sections against SECTIONS: every key is required and every
unknown key is refused, in every section and in the lab's nested ones, so that a deleted or misspelt key
stops the stage instead of falling back on a value written somewhere else. Each problem is a ParamsError
whose text is one line naming the key; every stage script prints it and exits with EXIT_REFUSED
(mha.stage). The values themselves are checked where they become dataclasses (mha.config,
mha.lab.runs, mha.report.params), by the same rule.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml

from mha.data import DataConfig

EXIT_REFUSED = 2  # every stage, for any problem with params.yaml or another input it cannot use

# data: is shared: fetch_data reads the source, a training run the split (mha.data.DataConfig).
DATA_SOURCE_KEYS = ("url", "sha256")


class ParamsError(ValueError):
    """A problem with params.yaml: one line that names the setting."""


def _data_keys() -> tuple[str, ...]:
    return (*DATA_SOURCE_KEYS, *(f.name for f in fields(DataConfig)))


def _model_keys() -> tuple[str, ...]:
    from mha.config import MODEL_KEYS

    return MODEL_KEYS


def _train_keys() -> tuple[str, ...]:
    from mha.config import TRAIN_KEYS

    return TRAIN_KEYS


def _report_keys() -> tuple[str, ...]:
    from mha.report.params import REPORT_KEYS

    return REPORT_KEYS


def _lab_keys() -> tuple[str, ...]:
    from mha.lab.runs import LAB_KEYS

    return LAB_KEYS


# Every section of params.yaml, and where its keys come from: the fields of the dataclass that holds it,
# imported only by the stages that read it (fetch_data should not wait for torch).
SECTIONS = {"data": _data_keys, "model": _model_keys, "train": _train_keys, "report": _report_keys,
            "lab": _lab_keys}


def load(path: str | Path, *read: str) -> dict:
    """params.yaml, with exactly SECTIONS' sections, and every key of the sections ``read`` checked."""
    path = Path(path)
    try:
        params = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParamsError(f"{path} does not exist: run the stage from the project's folder, "
                          "where params.yaml is") from None
    except OSError as exc:
        raise ParamsError(f"{path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ParamsError(f"{path} is not UTF-8 text: save it as UTF-8") from None
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None
    return check(params, read, path.name)


def check(params: Any, read: Iterable[str] = tuple(SECTIONS), name: str = "params.yaml") -> dict:
    """``params`` if it has exactly SECTIONS' sections and the sections ``read`` exactly their keys; else a
    ParamsError naming the first missing or unknown one."""
    section_of(params, SECTIONS, name)
    for key in read:
        check_keys(section(params, key), key, SECTIONS[key]())
    return params


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
