"""Points per test, from a TOML rubric file; ``grader/rubric.toml`` holds the defaults."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from grader.cases import FUNCTIONS, GROUPS
from grader.checks import Policy

# [options] mask: "finite" lets a fill at or below -1e9 count as masked; "-inf" requires −inf exactly.
MASK_OPTIONS = {"finite": False, "-inf": True}

# Only these functions have large-score cases (the ones that apply a softmax).
HAS_LARGE = ("softmax", "attention_weights", "attention_head", "multi_head_attention")


@dataclass(frozen=True)
class Rubric:
    points: dict  # (function, group) -> points; a test exists where points > 0
    source: str  # where the points came from, recorded in the results
    policy: Policy = Policy()  # how judging goes, from [options]

    @property
    def total(self) -> float:
        return sum(self.points.values())

    @property
    def worked_total(self) -> float:
        return sum(p for (_, group), p in self.points.items() if group == "worked")

    def tests(self) -> list[tuple[str, str, float]]:
        """(function, group, points) in the order the course computes them."""
        return [(f, g, self.points[(f, g)]) for f in FUNCTIONS for g in GROUPS if self.points.get((f, g), 0) > 0]


def _options(raw: dict, where: str) -> dict:
    """The [options] table as Policy fields."""
    options = raw.pop("options", {})
    if not isinstance(options, dict):
        raise ValueError(f"rubric {where}: [options] must be a table")
    fields = {}
    for key, value in options.items():
        if key != "mask":
            raise ValueError(f"rubric {where}: [options] {key} is not an option; the options are: mask")
        if value not in MASK_OPTIONS:
            raise ValueError(
                f"rubric {where}: [options] mask = {value!r}; use one of {', '.join(map(repr, MASK_OPTIONS))}"
            )
        fields["require_inf_mask"] = MASK_OPTIONS[value]
    return fields


def _parse(text: str, where: str) -> tuple[dict, dict]:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"rubric {where} is not valid TOML ({exc})") from None
    options = _options(raw, where)
    points = {}
    for function, table in raw.items():
        if function not in FUNCTIONS:
            raise ValueError(f"rubric {where}: unknown function [{function}]; the functions are {', '.join(FUNCTIONS)}")
        if not isinstance(table, dict):
            raise ValueError(f"rubric {where}: [{function}] must be a table of worked/hidden/large points")
        for group, value in table.items():
            if group not in GROUPS:
                raise ValueError(f"rubric {where}: [{function}] {group} is not a group; use {', '.join(GROUPS)}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"rubric {where}: [{function}] {group} = {value!r} must be a number >= 0")
            if group == "large" and value > 0 and function not in HAS_LARGE:
                raise ValueError(f"rubric {where}: [{function}] has no large-score cases; large must be 0 or left out")
            points[(function, group)] = float(value)
    return points, options


def load(path: str | Path | None = None) -> Rubric:
    """The default rubric, with the entries of ``path`` (if given) replacing its values."""
    default_text = resources.files("grader").joinpath("rubric.toml").read_text(encoding="utf-8")
    points, options = _parse(default_text, "grader/rubric.toml")
    source = "default"
    if path is not None:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"rubric {path} cannot be read ({exc.strerror})") from None
        more_points, more_options = _parse(text, str(path))
        points.update(more_points)
        options.update(more_options)
        source = str(path)
    rubric = Rubric(points={k: v for k, v in points.items() if v > 0}, source=source, policy=Policy(**options))
    if rubric.total <= 0:
        raise ValueError(f"rubric {source} gives no points at all")
    if rubric.worked_total > rubric.total / 2:
        raise ValueError(
            f"rubric {source} gives {rubric.worked_total:g} of {rubric.total:g} points to the worked example; "
            f"at most half ({rubric.total / 2:g}) is allowed, or hard-coded answers would pass"
        )
    return rubric
