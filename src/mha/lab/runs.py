"""The lab's `lab:` section of params.yaml, and the RunConfig of each controlled run.

Every lab run is the main run (`data:`, `model:`, `train:`) with three changes: the common shorter schedule
of `lab.schedule` (the SCHEDULE_KEYS of `train:`, all of them, so that a run's training is fully said by
`lab.schedule` and the rest of `train:`), the run's own model options of `lab.runs.<name>` (keys of
`model:`), and one of the seeds of `lab.seeds` in place of train.seed: each run is trained once per seed,
and the spread between seeds is the noise the lab page judges its differences against.
`lab_run_config` hands the result to mha.config.resolve, so every check of a value stays in one place.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from mha.config import MODEL_KEYS, RunConfig, resolve
from mha.errors import ERRORS
from mha.lab.scale import scale_statistics
from mha.messages import MessageError

# The keys of train: that the lab's schedule replaces; the rest (batch, lr, device, ...) is the main run's.
SCHEDULE_KEYS = ("max_iters", "warmup_iters", "eval_interval", "checkpoint_interval")
# Every key of train: a lab run takes from the lab: section instead (the seed from lab.seeds).
LAB_TRAIN_KEYS = (*SCHEDULE_KEYS, "seed")
MIN_SEEDS = 2  # a spread needs two; params.yaml has three
# lab.scale holds the arguments of scale_statistics, every one (it checks their values itself).
SCALE_KEYS = tuple(inspect.signature(scale_statistics).parameters)


@dataclass(frozen=True)
class OrderSettings:
    """`lab.order`: the windows of mha.lab.order.order_sensitivity (their length is model.block_size)."""

    windows: int
    seed: int

    def __post_init__(self) -> None:
        if not _is_int(self.windows) or self.windows < 1:
            raise ERRORS.error("config.not_positive_integer", setting="lab.order.windows", value=repr(self.windows))
        if not _is_int(self.seed):
            raise ERRORS.error("config.wrong_type", setting="lab.order.seed", type="int", value=repr(self.seed),
                               got=type(self.seed).__name__)


@dataclass(frozen=True)
class LabConfig:
    seeds: tuple[int, ...]  # each run is trained once with each, as train.seed
    schedule: Mapping[str, Any]  # train: key -> value, exactly SCHEDULE_KEYS
    runs: Mapping[str, Mapping[str, Any]]  # run name -> model: key -> value
    scale: Mapping[str, Any]  # the keyword arguments of mha.lab.scale.scale_statistics
    order: OrderSettings

    @classmethod
    def from_params(cls, params: Any) -> LabConfig:
        """The `lab:` section, its keys checked; an error (mha.errors) names the key and the allowed ones."""
        lab = _mapping(params.get("lab") if isinstance(params, dict) else None, "lab")
        _known_keys(lab, "lab", tuple(f.name for f in fields(cls)), required=True)
        seeds = lab["seeds"]
        if (not isinstance(seeds, list) or len(seeds) < MIN_SEEDS or not all(map(_is_int, seeds))
                or len(set(seeds)) != len(seeds)):
            raise ERRORS.error("lab.bad_seeds", least=MIN_SEEDS, value=repr(seeds))
        schedule = _mapping(lab["schedule"], "lab.schedule")
        _known_keys(schedule, "lab.schedule", SCHEDULE_KEYS, required=True)
        runs = _mapping(lab["runs"], "lab.runs")
        if not runs:
            raise ERRORS.error("lab.no_runs")
        for name, options in runs.items():
            _known_keys(_mapping(options, f"lab.runs.{name}"), f"lab.runs.{name}", MODEL_KEYS)
        scale = _mapping(lab["scale"], "lab.scale")
        _known_keys(scale, "lab.scale", SCALE_KEYS, required=True)
        order = _mapping(lab["order"], "lab.order")
        _known_keys(order, "lab.order", tuple(f.name for f in fields(OrderSettings)), required=True)
        return cls(seeds=tuple(seeds), schedule=schedule, runs=runs, scale=scale, order=OrderSettings(**order))


def lab_run_config(params: dict, name: str, seed: int) -> RunConfig:
    """The resolved RunConfig of lab run ``name`` with ``seed``: the main run with lab.schedule, lab.runs.<name>
    and the seed applied."""
    lab = LabConfig.from_params(params)
    if name not in lab.runs:
        raise ERRORS.error("lab.unknown_run", run=repr(name), runs=", ".join(lab.runs))
    if seed not in lab.seeds:
        raise ERRORS.error("lab.unknown_seed", seed=repr(seed), seeds=", ".join(map(str, lab.seeds)))
    merged = copy.deepcopy(params)
    merged["train"] = {**_mapping(params.get("train"), "train"), **lab.schedule, "seed": seed}
    merged["model"] = {**_mapping(params.get("model"), "model"), **lab.runs[name]}
    try:
        return resolve(merged)
    except MessageError as exc:  # named as the lab sets it
        raise ERRORS.error("lab.run_refused", run=name, error=exc.message) from None


def _mapping(value: Any, key: str) -> dict:
    if not isinstance(value, dict):
        raise ERRORS.error("lab.not_a_mapping", setting=key, value=repr(value))
    return value


def _known_keys(values: dict, key: str, allowed: tuple[str, ...], required: bool = False) -> None:
    unknown = sorted(set(values) - set(allowed), key=str)
    if unknown:
        raise ERRORS.error("config.unknown_key", setting=f"{key}.{unknown[0]}", allowed=", ".join(allowed))
    missing = [k for k in allowed if k not in values] if required else []
    if missing:
        raise ERRORS.error("config.missing_key", setting=f"{key}.{missing[0]}", section=key, needed=", ".join(allowed))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
