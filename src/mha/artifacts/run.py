"""What a training stage hands on: its results, learning curve, run record and generated sample.

    metrics/X.json   RunResults.summary(): the numbers `dvc metrics show` prints
    plots/X.csv      Curve: one CurveRow per evaluation (`dvc plots show` reads its val_loss column)
    models/X.json    RunRecord: the resolved config, the data, the software and, once it ends, its RunResults
    samples/X.txt    the generated text

Each is a DVC output, hashed into dvc.lock (in git): it holds only what is the same wherever the same run is
reproduced. Wall time, speed, CPU and dates are in the run's log (mha.artifacts.runlog), which DVC does not track.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from mha.artifacts.records import JsonArtifact, Source
from mha.files import atomic_write_text, write_json

# The metrics file holds the numbers a person compares between runs; every result is in the run record.
SUMMARY_KEYS = ("best_val_loss",)


@dataclass(frozen=True)
class RunResults:
    best_val_loss: float
    final_val_loss: float
    final_train_loss: float
    iterations: int
    tokens_seen: int
    parameters: int

    def summary(self) -> dict[str, float]:
        return {key: getattr(self, key) for key in SUMMARY_KEYS}


def write_metrics(path: str | Path, results: RunResults) -> Path:
    return write_json(path, results.summary())


@dataclass(frozen=True)
class CurveRow:
    """One evaluation; each field's format is its column's in the CSV."""

    step: int = field(metadata={"format": "d"})
    tokens: int = field(metadata={"format": "d"})
    train_loss: float = field(metadata={"format": ".6f"})
    val_loss: float = field(metadata={"format": ".6f"})
    lr: float = field(metadata={"format": ".8g"})


CURVE_COLUMNS = tuple(f.name for f in fields(CurveRow))


@dataclass(frozen=True)
class Curve:
    rows: list[CurveRow]

    def __post_init__(self) -> None:
        if not self.rows:
            raise ValueError("a learning curve needs at least one evaluation")

    @property
    def step(self) -> list[int]:
        return [r.step for r in self.rows]

    @property
    def train_loss(self) -> list[float]:
        return [r.train_loss for r in self.rows]

    @property
    def val_loss(self) -> list[float]:
        return [r.val_loss for r in self.rows]


def write_curve(path: str | Path, curve: Curve) -> Path:
    lines = [",".join(CURVE_COLUMNS)] + [
        ",".join(format(getattr(row, f.name), f.metadata["format"]) for f in fields(CurveRow)) for row in curve.rows
    ]
    return atomic_write_text(path, "\n".join(lines) + "\n")


def read_curve(path: str | Path, producer: str) -> Curve:
    source = Source(Path(path), "learning curve", producer)
    rows = list(csv.reader(source.read_text().splitlines()))
    if not rows or tuple(rows[0]) != CURVE_COLUMNS:
        got = repr(",".join(rows[0])) if rows else "an empty file"
        raise source.error(f"must start with the header {','.join(CURVE_COLUMNS)}, got {got}")
    if len(rows) < 2:
        raise source.error("has no evaluation rows")
    return Curve([_curve_row(row, number, source) for number, row in enumerate(rows[1:], start=2)])


def _curve_row(row: list[str], number: int, source: Source) -> CurveRow:
    if len(row) != len(CURVE_COLUMNS):
        raise source.error(f"line {number} has {len(row)} fields, expected {len(CURVE_COLUMNS)}")
    try:
        values = [int(v) if f.type == "int" else float(v) for f, v in zip(fields(CurveRow), row, strict=True)]
    except ValueError:
        raise source.error(f"line {number} is not numeric (step and tokens whole numbers): {','.join(row)!r}") \
            from None
    if not all(math.isfinite(v) for v in values):
        raise source.error(f"line {number} has a non-finite value: {','.join(row)!r}")
    return CurveRow(*values)


@dataclass(frozen=True)
class DataRecord:
    """The corpus a run trained on and how it was split."""

    path: str
    sha256: str  # of the corpus file's bytes
    val_fraction: float
    train_chars: int  # the first train_chars characters train, the rest validate
    val_chars: int


@dataclass(frozen=True)
class RunRecord:
    """models/X.json: everything about a run, written when it starts and again with its results."""

    model: dict[str, Any]  # mha.schema.GPTConfig, as saved with asdict
    train: dict[str, Any]  # mha.schema.TrainConfig, as saved with asdict
    device: str
    attention_kernel: str | None  # None without attention
    data: DataRecord
    versions: dict[str, str | None]  # mha.machine.versions()
    denormals: str  # mha.machine.denormals() as training started: "flushed" by the stages, else "kept"
    code: dict[str, str]  # file name -> sha256 of the code the checkpoint depends on
    parameters: int
    results: RunResults | None = None  # None until the run ends


RUN_RECORD = JsonArtifact(RunRecord, "run record")  # written by train_attention and train_no_attention


def read_finished_run(path: str | Path, producer: str) -> tuple[RunRecord, RunResults]:
    """A run record with its results: the run ended."""
    record = RUN_RECORD.read(path, producer)
    if record.results is None:
        raise RUN_RECORD.source(path, producer).error("has no results (the run did not finish)")
    return record, record.results


def corpus_source(path: str | Path) -> Source:
    """The raw corpus, as the stages that read it name it."""
    return Source(Path(path), "corpus", "fetch_data")


def write_sample(path: str | Path, text: str) -> Path:
    return atomic_write_text(path, text)


def read_sample(path: str | Path, producer: str) -> str:
    source = Source(Path(path), "sample", producer)
    text = source.read_text()
    if not text.strip():
        raise source.error("is empty")
    return text
