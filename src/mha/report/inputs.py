"""Everything the report reads, each file through its reader in mha.artifacts.

A problem raises mha.artifacts.records.ArtifactError: one line naming the file, what is wrong and the
stage to re-run, which the stage script prints instead of a traceback.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from mha.artifacts import run as artifacts
from mha.artifacts.attention import ATTENTION_MAPS, AttentionMaps
from mha.artifacts.worked import WORKED_EXAMPLE, WorkedExampleRecord


@dataclass(frozen=True)
class RunPaths:
    """The outputs of one training stage (train_attention or train_no_attention) that the report reads."""

    plots: Path
    samples: Path
    config: Path


@dataclass(frozen=True)
class ReportPaths:
    attention: RunPaths
    no_attention: RunPaths
    attention_weights: Path
    worked_example_matrices: Path
    corpus: Path


@dataclass(frozen=True)
class Run:
    record: artifacts.RunRecord
    results: artifacts.RunResults
    curve: artifacts.Curve
    sample: str


@dataclass(frozen=True)
class ReportInputs:
    attention: Run
    no_attention: Run
    attention_maps: AttentionMaps
    worked_example: WorkedExampleRecord
    corpus: str  # the text both runs trained on; their run records say where it was split


def load_run(paths: RunPaths, producer: str) -> Run:
    record, results = artifacts.read_finished_run(paths.config, producer)
    curve = artifacts.read_curve(paths.plots, producer)
    return Run(record, results, curve, artifacts.read_sample(paths.samples, producer))


def load_inputs(paths: ReportPaths) -> ReportInputs:
    attention = load_run(paths.attention, "train_attention")
    no_attention = load_run(paths.no_attention, "train_no_attention")
    if no_attention.record.data != attention.record.data:
        raise artifacts.RUN_RECORD.source(paths.no_attention.config, "train_no_attention").error(
            f"is of a run on other data than {paths.attention.config} (sha256 or split differ)")
    corpus = artifacts.corpus_source(paths.corpus).read_text()
    if hashlib.sha256(corpus.encode("utf-8")).hexdigest() != attention.record.data.sha256:
        raise artifacts.RUN_RECORD.source(paths.attention.config, "train_attention").error(
            f"is of a run on another corpus than {paths.corpus} (the sha256 differs)")
    return ReportInputs(
        attention=attention,
        no_attention=no_attention,
        attention_maps=ATTENTION_MAPS.read(paths.attention_weights),
        worked_example=WORKED_EXAMPLE.read(paths.worked_example_matrices),
        corpus=corpus,
    )
