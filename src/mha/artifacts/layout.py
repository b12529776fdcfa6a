"""Where a training run keeps its files: one type for the main runs (dvc.yaml's paths on the stage's command
line) and the lab's (mha.lab.layout.LabFolders.run). No torch here: the pages read these files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunFiles:
    metrics: Path  # best and final losses (mha.artifacts.run.write_metrics)
    plot: Path  # the learning curve, CSV
    model: Path  # the checkpoint (mha.checkpoint)
    record: Path  # the run record: config, data, versions, and the results at the end
    sample: Path  # generated text
    attention: Path | None  # heat-map data, for a model with attention
    run_log: Path  # no DVC output: wall time and speed, which differ on every machine (mha.artifacts.runlog)
    order: Path | None = None  # the lab's: how much the run uses the order of the characters (mha.lab.order)
