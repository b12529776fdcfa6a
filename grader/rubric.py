"""Points per test, from a TOML rubric file; ``grader/rubric.toml`` holds the defaults."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from grader.functions.contract import FUNCTIONS, GROUPS, functions_with
from grader.messages import Message
from grader.module.contract import CONTRACTS, MODULE_TESTS, Contract

# [options] mask: "finite" lets a fill at or below -1e9 count as masked; "-inf" requires −inf exactly.
MASK_OPTIONS = {"finite": False, "-inf": True}
# [options] visibility: when Gradescope shows the tests on seeded cases (the worked example's are always visible).
VISIBILITIES = ("visible", "after_due_date", "hidden")


@dataclass(frozen=True)
class Policy:
    """What the rubric decides about judging (``[options]`` in the rubric TOML)."""

    require_inf_mask: bool = False  # True: a finite mask value fails causal_mask, even -1e9


@dataclass(frozen=True)
class Rubric:
    points: dict  # (function, group) -> points; a test exists where points > 0
    source: str  # where the points came from, recorded in the results
    policy: Policy = Policy()  # how judging goes, from [options]
    contract: Contract = Contract.AUTO  # which question's tests a submission is graded on (one of CONTRACTS)
    imports: tuple[str, ...] = ()  # packages a submission may import besides the standard library, from [options]
    visibility: str = "visible"  # Gradescope's visibility of every test but the worked example's, from [options]

    def visibility_of(self, group: str) -> str:
        return "visible" if group == "worked" else self.visibility

    @property
    def total(self) -> float:
        return sum(p for (f, _), p in self.points.items() if f in FUNCTIONS)

    @property
    def worked_total(self) -> float:
        return sum(p for (f, group), p in self.points.items() if group == "worked" and f in FUNCTIONS)

    def tests(self) -> list[tuple[str, str, float]]:
        """(function, group, points) in the order the course computes them."""
        return [(f, g, self.points[(f, g)]) for f in FUNCTIONS for g in GROUPS if self.points.get((f, g), 0) > 0]

    def module_tests(self) -> list[tuple[str, str, float]]:
        """Question 2's (name, group, points), in the order they run."""
        return [(name, g, self.points[(name, g)]) for name, groups in MODULE_TESTS.items() for g in groups
                if self.points.get((name, g), 0) > 0]


def _options(raw: dict, where: str) -> dict:
    """The [options] table as Policy fields (and ``imports``, the packages a submission may import)."""
    options = raw.pop("options", {})
    if not isinstance(options, dict):
        raise Message.error("rubric.options_not_table", where=where)
    fields = {}
    for key, value in options.items():
        if key == "contract":
            if value not in CONTRACTS:
                raise Message.error("rubric.bad_contract", where=where, value=repr(value),
                                    choices=", ".join(map(repr, CONTRACTS)))
            fields["contract"] = Contract(value)
            continue
        if key == "visibility":
            if value not in VISIBILITIES:
                raise Message.error("rubric.bad_visibility", where=where, value=repr(value),
                                    choices=", ".join(map(repr, VISIBILITIES)))
            fields["visibility"] = value
            continue
        if key == "imports":
            if not (isinstance(value, list) and all(isinstance(v, str) and v.isidentifier() for v in value)):
                raise Message.error("rubric.bad_imports", where=where, value=repr(value))
            fields["imports"] = tuple(value)
            continue
        if key != "mask":
            raise Message.error("rubric.unknown_option", where=where, key=key)
        if value not in MASK_OPTIONS:
            raise Message.error("rubric.bad_mask", where=where, value=repr(value),
                                choices=", ".join(map(repr, MASK_OPTIONS)))
        fields["require_inf_mask"] = MASK_OPTIONS[value]
    return fields


def _parse(text: str, where: str) -> tuple[dict, dict]:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Message.error("rubric.not_toml", where=where, error=str(exc)) from None
    options = _options(raw, where)
    points = {}
    for function, table in raw.items():
        if function not in FUNCTIONS and function not in MODULE_TESTS:
            raise Message.error("rubric.unknown_function", where=where, function=function,
                                functions=", ".join((*FUNCTIONS, *MODULE_TESTS)))
        if not isinstance(table, dict):
            raise Message.error("rubric.not_table", where=where, function=function)
        groups = MODULE_TESTS.get(function, GROUPS)
        for group, value in table.items():
            if group not in groups:
                raise Message.error("rubric.unknown_group", where=where, function=function, group=group,
                                    groups=", ".join(groups))
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise Message.error("rubric.bad_points", where=where, function=function, group=group, value=repr(value))
            if group == "large" and value > 0 and function not in functions_with("large"):
                raise Message.error("rubric.no_large", where=where, function=function)
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
            raise Message.error("rubric.unreadable", where=path, error=exc.strerror) from None
        more_points, more_options = _parse(text, str(path))
        points.update(more_points)
        options.update(more_options)
        source = str(path)
    contract = options.pop("contract", Contract.AUTO)
    imports = options.pop("imports")
    visibility = options.pop("visibility", "visible")
    rubric = Rubric(points={k: v for k, v in points.items() if v > 0}, source=source, policy=Policy(**options),
                    contract=contract, imports=imports, visibility=visibility)
    if rubric.total <= 0 and contract != Contract.MODULE:
        raise Message.error("rubric.no_points", where=source)
    if not rubric.module_tests() and contract == Contract.MODULE:
        raise Message.error("rubric.no_points", where=source)
    if rubric.worked_total > rubric.total / 2:
        raise Message.error("rubric.worked_too_much", where=source, worked=rubric.worked_total, total=rubric.total,
                            half=rubric.total / 2)
    return rubric
