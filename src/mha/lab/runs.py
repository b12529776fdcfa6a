"""The RunConfig of each of the lab's controlled runs, from params.yaml's `lab:` section.

Every lab run is the main run (`data:`, `model:`, `train:`) with three changes: the common shorter schedule
of `lab.schedule` (the SCHEDULE_KEYS of `train:`, all of them, so that a run's training is fully said by
`lab.schedule` and the rest of `train:`), the run's own model options of `lab.runs.<name>` (keys of
`model:`), and one of the seeds of `lab.seeds` in place of train.seed: each run is trained once per seed,
and the spread between seeds is the noise the lab page judges its differences against.
`lab_run_config` hands the result to mha.schema.resolve, so every check of a value stays in one place; the
`lab:` section itself is mha.schema.LabConfig.
"""

from __future__ import annotations

import copy

from mha.params import ParamsError, section
from mha.schema import LabConfig, RunConfig, resolve


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
