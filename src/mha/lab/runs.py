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
from mha.lab.scale import scale_statistics
from mha.params import ParamsError, check_keys, section

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
            raise ParamsError(f"lab.order.windows must be a positive integer, got {self.windows!r}")
        if not _is_int(self.seed):
            raise ParamsError(f"lab.order.seed must be an integer, got {self.seed!r}")


@dataclass(frozen=True)
class LabConfig:
    seeds: tuple[int, ...]  # each run is trained once with each, as train.seed
    schedule: Mapping[str, Any]  # train: key -> value, exactly SCHEDULE_KEYS
    runs: Mapping[str, Mapping[str, Any]]  # run name -> model: key -> value
    scale: Mapping[str, Any]  # the keyword arguments of mha.lab.scale.scale_statistics
    order: OrderSettings

    @classmethod
    def from_params(cls, params: Any) -> LabConfig:
        """The `lab:` section, every key (and every key of its nested mappings) checked by mha.params' rule."""
        lab = section(params, "lab")
        check_keys(lab, "lab", LAB_KEYS)
        seeds = lab["seeds"]
        if (not isinstance(seeds, list) or len(seeds) < MIN_SEEDS or not all(map(_is_int, seeds))
                or len(set(seeds)) != len(seeds)):
            raise ParamsError(f"lab.seeds must be a list of at least {MIN_SEEDS} different integers (each run is "
                              f"trained once with each), got {seeds!r}")
        schedule = section(lab, "schedule")
        check_keys(schedule, "lab.schedule", SCHEDULE_KEYS)
        runs = section(lab, "runs")
        if not runs:
            raise ParamsError("lab.runs is empty; it needs at least one run (reference: {} is the default model)")
        for name in runs:
            check_keys(section(runs, name), f"lab.runs.{name}", MODEL_KEYS, required=False)
        scale = section(lab, "scale")
        check_keys(scale, "lab.scale", SCALE_KEYS)
        order = section(lab, "order")
        check_keys(order, "lab.order", ORDER_KEYS)
        return cls(seeds=tuple(seeds), schedule=schedule, runs=runs, scale=scale, order=OrderSettings(**order))


LAB_KEYS = tuple(f.name for f in fields(LabConfig))
ORDER_KEYS = tuple(f.name for f in fields(OrderSettings))


def lab_run_config(params: dict, name: str, seed: int, *, full_schedule: bool = False) -> RunConfig:
    """The resolved RunConfig of lab run ``name`` with ``seed``: the main run with lab.schedule, lab.runs.<name>
    and the seed applied. With ``full_schedule`` (the run is on a GPU, where the main run's schedule costs
    seconds) the run keeps the main run's schedule instead of lab.schedule; its run record says which."""
    lab = LabConfig.from_params(params)
    if name not in lab.runs:
        raise ParamsError(f"lab.runs has no run {name!r}; the runs are: {', '.join(lab.runs)}")
    if seed not in lab.seeds:
        raise ParamsError(f"lab.seeds has no seed {seed!r}; the seeds are: {', '.join(map(str, lab.seeds))}")
    merged = copy.deepcopy(params)
    schedule = {} if full_schedule else lab.schedule
    merged["train"] = {**section(params, "train"), **schedule, "seed": seed}
    merged["model"] = {**section(params, "model"), **lab.runs[name]}
    try:
        return resolve(merged)
    except ValueError as exc:  # named as the lab sets it
        raise ParamsError(f"lab run {name} (model: with lab.runs.{name}, train: with lab.schedule): {exc}") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
