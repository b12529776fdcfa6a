"""Where each controlled run of the lab keeps its files: one place for the pattern, used by the stages
and by the lab page (dvc.yaml's `path.lab_*` folders are the same ones). No torch here: the page reads
these files without training anything."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mha.artifacts.layout import RunFiles
from mha.artifacts.runlog import run_log_path


@dataclass(frozen=True)
class LabFolders:
    metrics: Path  # metrics/lab
    plots: Path  # plots/lab
    models: Path  # models/lab
    samples: Path  # samples/lab
    artifacts: Path  # artifacts/lab

    def run(self, name: str, seed: int | str) -> RunFiles:
        """Run ``name`` trained with ``seed``: each file in a folder named after the run, named after the seed."""
        record = self.models / name / f"{seed}.json"
        return RunFiles(
            metrics=self.metrics / name / f"{seed}.json",
            plot=self.plots / name / f"{seed}.csv",
            model=self.models / name / f"{seed}.pt",
            record=record,
            sample=self.samples / name / f"{seed}.txt",
            attention=self.artifacts / name / str(seed) / "attention.json",
            order=self.artifacts / name / str(seed) / "order.json",
            run_log=run_log_path(record),
        )

    @property
    def scale(self) -> Path:
        return self.artifacts / "scale.json"
