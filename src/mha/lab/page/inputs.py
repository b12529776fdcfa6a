"""Everything the lab page reads, each file through its reader in mha.artifacts, where mha.lab.layout puts it.

A problem raises mha.artifacts.records.ArtifactError (one line naming the file, what is wrong and the
stage to re-run), which the stage script prints instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mha.artifacts import run as artifacts
from mha.artifacts.attention import ATTENTION_MAPS, AttentionMaps
from mha.artifacts.lab import ORDER_SENSITIVITY, SCALE_STATISTICS, OrderSensitivity
from mha.lab.cost import ATTENTION_COST, COST_FILE, AttentionCost
from mha.lab.layout import LabFolders
from mha.lab.scale import ScaleStatistics

RUN_PRODUCER = ORDER_SENSITIVITY.producer  # the stage that trains each lab run and writes all its files


@dataclass(frozen=True)
class SeedRun:
    """One lab run trained with one seed: every file it wrote."""

    seed: int
    record: artifacts.RunRecord
    results: artifacts.RunResults
    curve: artifacts.Curve
    sample: str
    maps: AttentionMaps
    order: OrderSensitivity


@dataclass(frozen=True)
class LabRun:
    """One lab run (one model), trained once per seed of lab.seeds."""

    name: str
    seeds: tuple[SeedRun, ...]  # in the order of lab.seeds

    @property
    def record(self) -> artifacts.RunRecord:
        """The first seed's run record (the model and everything but train.seed are every seed's)."""
        return self.seeds[0].record

    @property
    def model(self) -> dict:
        return self.record.model

    @property
    def d_k(self) -> int:
        return self.model["n_embd"] // self.model["n_head"]

    def values(self, measure: Callable[[SeedRun], float]) -> tuple[float, ...]:
        """``measure`` of each seed's run, e.g. ``run.values(lambda s: s.results.best_val_loss)``."""
        return tuple(measure(seed) for seed in self.seeds)


@dataclass(frozen=True)
class LabInputs:
    runs: dict[str, LabRun]  # in the order params.yaml lists them
    scale: ScaleStatistics
    cost: AttentionCost  # the lab_cost stage's


def load_seed(folders: LabFolders, name: str, seed: int) -> SeedRun:
    files = folders.run(name, seed)
    record, results = artifacts.read_finished_run(files.record, RUN_PRODUCER)
    return SeedRun(
        seed=seed,
        record=record,
        results=results,
        curve=artifacts.read_curve(files.plot, RUN_PRODUCER),
        sample=artifacts.read_sample(files.sample, RUN_PRODUCER),
        maps=ATTENTION_MAPS.read(files.attention, RUN_PRODUCER),
        order=ORDER_SENSITIVITY.read(files.order),
    )


def load_lab(folders: LabFolders, names: Sequence[str], seeds: Sequence[int]) -> LabInputs:
    """The runs ``names`` (params.yaml's lab.runs), each with every seed of ``seeds`` (lab.seeds), the scale
    statistics and attention's cost. Every run must be on the same data, and each run's seeds must share its model."""
    if not names:
        raise ValueError("params.yaml lab.runs names no run")
    runs = {name: LabRun(name, tuple(load_seed(folders, name, seed) for seed in seeds)) for name in names}
    first = runs[names[0]].seeds[0]
    for run in runs.values():
        for seed in run.seeds:
            record = folders.run(run.name, seed.seed).record
            if seed.record.data != first.record.data:
                raise artifacts.RUN_RECORD.source(record, RUN_PRODUCER).error(
                    f"is of a run on other data than {folders.run(names[0], first.seed).record} "
                    "(sha256 or split differ)")
            if seed.record.model != run.model or seed.record.train["seed"] != seed.seed:
                raise artifacts.RUN_RECORD.source(record, RUN_PRODUCER).error(
                    f"is not run {run.name} with seed {seed.seed} (its model or train.seed differ)")
    return LabInputs(runs=runs, scale=SCALE_STATISTICS.read(folders.scale),
                     cost=ATTENTION_COST.read(folders.artifacts / COST_FILE))
