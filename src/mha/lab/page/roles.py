"""Which run answers which question, read from the runs' model configs (their run records' `model`).

Each controlled run differs from the reference in one thing, so the reference is the run from which the
most other runs differ in exactly one setting. Then
  - the heads runs differ from it only in n_head;
  - the positions runs differ from it only in positions;
  - the scale pair is the run without the 1/√d_k scale and its twin, the run that differs from it only in
    scale_scores (the unscaled run may also differ from the reference in n_head: one head, d_k = d_model).
A run's name plays no part, so renaming a run in params.yaml changes nothing on the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Model = Mapping[str, Any]  # a GPTConfig as saved with asdict


@dataclass(frozen=True)
class LabRoles:
    reference: str
    heads: tuple[str, ...]  # the reference and the runs differing from it only in n_head, fewest heads first
    positions: tuple[str, ...]  # the reference first, then the runs differing from it only in positions
    scaled: str  # the scale pair's run with the scale ...
    unscaled: str  # ... and without it; the two differ only in scale_scores


def differences(a: Model, b: Model) -> set[str]:
    """The settings in which two model configs differ (a setting one of them lacks counts)."""
    return {key for key in a.keys() | b.keys() if a.get(key) != b.get(key)}


def find_reference(models: Mapping[str, Model]) -> str:
    """The run from which the most runs differ in exactly one setting; a tie is refused."""
    neighbours = {name: sum(len(differences(model, other)) == 1 for other in models.values())
                  for name, model in models.items()}
    most = max(neighbours.values(), default=0)
    leaders = sorted(name for name, count in neighbours.items() if count == most)
    if most == 0 or len(leaders) > 1:
        raise ValueError(f"cannot tell the reference among the runs {', '.join(sorted(models))}: no single run is "
                         "the one the others each differ from in one setting")
    return leaders[0]


def varying_only(models: Mapping[str, Model], reference: str, setting: str) -> list[str]:
    """The runs that differ from the reference in ``setting`` alone."""
    return [name for name, model in models.items() if differences(model, models[reference]) == {setting}]


def assign_roles(models: Mapping[str, Model]) -> LabRoles:
    """``models``: run name -> its model config. Refuses, naming the question, a lab that cannot answer one."""
    reference = find_reference(models)
    heads = varying_only(models, reference, "n_head")
    positions = varying_only(models, reference, "positions")
    pairs = [(twin, name) for name, model in models.items() if model.get("scale_scores") is False
             for twin in models if differences(models[twin], model) == {"scale_scores"}]
    for question, found in (("n_head", heads), ("positions", positions), ("scale_scores", pairs)):
        if not found:
            raise ValueError(f"no run differs from the reference {reference} only in {question}, so the page "
                             "cannot answer that question")
    if len(pairs) > 1:
        raise ValueError("more than one pair of runs differs only in scale_scores "
                         f"({', '.join(f'{a}/{b}' for a, b in sorted(pairs))}); the page compares one")
    (scaled, unscaled), = pairs
    return LabRoles(
        reference=reference,
        heads=tuple(sorted([reference, *heads], key=lambda name: (models[name]["n_head"], name))),
        positions=(reference, *sorted(positions, key=lambda name: (str(models[name]["positions"]), name))),
        scaled=scaled,
        unscaled=unscaled,
    )
