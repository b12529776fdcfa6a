"""Everything the report reads, each file through its reader in mha.artifacts.

A problem raises mha.artifacts.records.ArtifactError: one line naming the file, what is wrong and the
stage to re-run, which the stage script prints instead of a traceback.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from mha.artifacts.attention import AttentionMaps, attention_source, read_attention_maps
from mha.artifacts.records import Source
from mha.artifacts.run import (
    Curve,
    RunRecord,
    RunResults,
    curve_source,
    read_curve,
    read_finished_run,
    read_sample,
    record_source,
    sample_source,
)
from mha.artifacts.worked import WorkedExampleRecord, read_worked_example, worked_example_source


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
    record: RunRecord
    results: RunResults
    curve: Curve
    sample: str


@dataclass(frozen=True)
class ReportInputs:
    attention: Run
    no_attention: Run
    attention_maps: AttentionMaps
    worked_example: WorkedExampleRecord
    corpus: str  # the text both runs trained on; their run records say where it was split


def load_run(paths: RunPaths, producer: str) -> Run:
    record, results = read_finished_run(record_source(paths.config, producer))
    return Run(record, results, read_curve(curve_source(paths.plots, producer)),
               read_sample(sample_source(paths.samples, producer)))


def load_inputs(paths: ReportPaths) -> ReportInputs:
    attention = load_run(paths.attention, "train_attention")
    no_attention = load_run(paths.no_attention, "train_no_attention")
    if no_attention.record.data != attention.record.data:
        raise record_source(paths.no_attention.config, "train_no_attention").error(
            f"is of a run on other data than {paths.attention.config} (sha256 or split differ)")
    corpus = Source(paths.corpus, "corpus", "fetch_data").read_text()
    if hashlib.sha256(corpus.encode("utf-8")).hexdigest() != attention.record.data.sha256:
        raise record_source(paths.attention.config, "train_attention").error(
            f"is of a run on another corpus than {paths.corpus} (the sha256 differs)")
    return ReportInputs(
        attention=attention,
        no_attention=no_attention,
        attention_maps=read_attention_maps(attention_source(paths.attention_weights)),
        worked_example=read_worked_example(worked_example_source(paths.worked_example_matrices)),
        corpus=corpus,
    )
