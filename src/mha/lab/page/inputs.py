"""Everything the lab page reads, each file through its reader in mha.artifacts, where mha.lab.layout puts it.

A problem raises mha.artifacts.records.ArtifactError (one line naming the file, what is wrong and the
stage to re-run), which the stage script prints instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mha.artifacts import run as artifacts
from mha.artifacts.attention import ATTENTION_MAPS, AttentionMaps
from mha.artifacts.lab import ORDER_SENSITIVITY, SCALE_STATISTICS, OrderSensitivity
from mha.lab.layout import LabFolders
from mha.lab.scale import ScaleStatistics
from mha.stage_messages import CATALOG

RUN_PRODUCER = ORDER_SENSITIVITY.producer  # the stage that trains each lab run and writes all its files


@dataclass(frozen=True)
class LabRun:
    name: str
    record: artifacts.RunRecord
    results: artifacts.RunResults
    curve: artifacts.Curve
    sample: str
    maps: AttentionMaps
    order: OrderSensitivity

    @property
    def model(self) -> dict:
        return self.record.model

    @property
    def d_k(self) -> int:
        return self.model["n_embd"] // self.model["n_head"]


@dataclass(frozen=True)
class LabInputs:
    runs: dict[str, LabRun]  # in the order params.yaml lists them
    scale: ScaleStatistics


def load_run(folders: LabFolders, name: str) -> LabRun:
    files = folders.run(name)
    record, results = artifacts.read_finished_run(files.record, RUN_PRODUCER)
    return LabRun(
        name=name,
        record=record,
        results=results,
        curve=artifacts.read_curve(files.plot, RUN_PRODUCER),
        sample=artifacts.read_sample(files.sample, RUN_PRODUCER),
        maps=ATTENTION_MAPS.read(files.attention, RUN_PRODUCER),
        order=ORDER_SENSITIVITY.read(files.order),
    )


def load_lab(folders: LabFolders, names: Sequence[str]) -> LabInputs:
    """The runs ``names`` (params.yaml's lab.runs) and the scale statistics; the runs must share their data."""
    if not names:
        raise CATALOG.error("lab_report.no_runs")
    runs = {name: load_run(folders, name) for name in names}
    first = runs[names[0]]
    for run in runs.values():
        if run.record.data != first.record.data:
            raise artifacts.RUN_RECORD.source(folders.run(run.name).record, RUN_PRODUCER).error(
                f"is of a run on other data than {folders.run(first.name).record} (sha256 or split differ)")
    return LabInputs(runs=runs, scale=SCALE_STATISTICS.read(folders.scale))


def run_names(params: dict) -> list[str]:
    """params.yaml's lab.runs: a list of run names, or a mapping keyed by them (each run's settings)."""
    runs = (params.get("lab") or {}).get("runs")
    names = list(runs) if isinstance(runs, (list, dict)) else []
    if not names or not all(isinstance(name, str) and name for name in names):
        raise CATALOG.error("lab_report.bad_runs", value=repr(runs))
    return names
