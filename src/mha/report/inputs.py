"""Load and check everything the report reads: the training runs, the worked example, the corpus.

Every problem is raised as ReportInputError with one line naming the file, what was wrong and what
to do, so that the stage script can print it instead of a traceback.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The contract between the training stages and the report: the "results" of the run record
# (models/X.json, written by mha.train.train; see dvc.yaml).
METRIC_KEYS = (
    "best_val_loss",
    "final_val_loss",
    "final_train_loss",
    "iterations",
    "tokens_seen",
    "parameters",
    "wall_seconds",
    "tokens_per_second",
)
PLOT_HEADER = ["step", "tokens", "train_loss", "val_loss", "lr"]
# Rows of saved attention maps sum to 1 up to the rounding of 64 saved values (4 decimals: 3.2e-3);
# a transposed or unnormalised map misses by far more.
ROW_SUM_TOLERANCE = 1e-2


class ReportInputError(ValueError):
    """An input of the report is missing or malformed; the message says which and what to do."""


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
class Curve:
    """One row per evaluation of a training run (plots/X.csv)."""

    step: list[int]
    tokens: list[int]
    train_loss: list[float]
    val_loss: list[float]
    lr: list[float]


@dataclass(frozen=True)
class Run:
    metrics: dict[str, float]
    curve: Curve
    sample: str
    config: dict[str, Any]


@dataclass(frozen=True)
class AttentionMaps:
    excerpt: str
    tokens: list[str]
    n_layer: int
    n_head: int
    weights: list  # [L][H][T][T], row = query, column = key


@dataclass(frozen=True)
class ReportInputs:
    attention: Run
    no_attention: Run
    attention_maps: AttentionMaps
    worked_example: dict[str, Any]  # schema: mha.verify.VerificationResult.matrices()
    corpus: str


def _read_text(path: Path, what: str, producer: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportInputError(f"{what} {path} does not exist: run `dvc repro {producer}` first") from None
    except UnicodeDecodeError as exc:
        raise ReportInputError(f"{what} {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ReportInputError(f"cannot read {what} {path}: {exc.strerror}") from None


def _read_json(path: Path, what: str, producer: str) -> Any:
    text = _read_text(path, what, producer)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportInputError(
            f"{what} {path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}): "
            f"re-run `dvc repro {producer}`"
        ) from None


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_results(config: dict[str, Any], path: Path, producer: str) -> dict[str, float]:
    """The run record's "results" section: every METRIC_KEYS entry, each a finite number."""
    raw = config.get("results")
    if not isinstance(raw, dict):
        raise ReportInputError(f"run record {path} has no results section: re-run `dvc repro {producer}`")
    missing = [k for k in METRIC_KEYS if k not in raw]
    if missing:
        raise ReportInputError(f"run record {path} results lack {', '.join(missing)}: re-run `dvc repro {producer}`")
    bad = [f"{k}={raw[k]!r}" for k in METRIC_KEYS if not _finite_number(raw[k])]
    if bad:
        raise ReportInputError(f"run record {path} results have non-numeric or non-finite values: {', '.join(bad)}")
    return {k: raw[k] for k in METRIC_KEYS}


def load_curve(path: Path, producer: str) -> Curve:
    lines = _read_text(path, "plot file", producer).splitlines()
    rows = list(csv.reader(lines))
    if not rows or rows[0] != PLOT_HEADER:
        got = ",".join(rows[0]) if rows else "an empty file"
        raise ReportInputError(f"plot file {path} must start with the header {','.join(PLOT_HEADER)}, got {got!r}")
    if len(rows) < 2:
        raise ReportInputError(f"plot file {path} has no evaluation rows: re-run `dvc repro {producer}`")
    columns: dict[str, list] = {name: [] for name in PLOT_HEADER}
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(PLOT_HEADER):
            raise ReportInputError(f"plot file {path} line {number} has {len(row)} fields, expected {len(PLOT_HEADER)}")
        try:
            values = [float(v) for v in row]
            # step and tokens are counts; accept "1000" and "1000.0", refuse "1000.5"
            if not (values[0].is_integer() and values[1].is_integer()):
                raise ValueError
            values[:2] = [int(values[0]), int(values[1])]
        except ValueError:
            raise ReportInputError(f"plot file {path} line {number} is not numeric (step and tokens whole numbers): "
                                   f"{','.join(row)!r}") from None
        if not all(math.isfinite(v) for v in values[2:]):
            raise ReportInputError(f"plot file {path} line {number} has a non-finite value: {','.join(row)!r}")
        for name, value in zip(PLOT_HEADER, values, strict=True):
            columns[name].append(value)
    return Curve(**columns)


def load_attention_maps(path: Path) -> AttentionMaps:
    raw = _read_json(path, "attention weights", "train_attention")
    try:
        maps = AttentionMaps(
            excerpt=str(raw["excerpt"]),
            tokens=[str(t) for t in raw["tokens"]],
            n_layer=int(raw["n_layer"]),
            n_head=int(raw["n_head"]),
            weights=raw["weights"],
        )
    except (KeyError, TypeError) as exc:
        raise ReportInputError(
            f"attention weights {path} lack {exc}: expected excerpt, tokens, n_layer, n_head, weights"
        ) from None
    T = len(maps.tokens)
    if T == 0 or "".join(maps.tokens) != maps.excerpt:
        raise ReportInputError(f"attention weights {path}: tokens must spell the excerpt, one character each")
    shape_ok = (
        isinstance(maps.weights, list)
        and len(maps.weights) == maps.n_layer
        and all(isinstance(layer, list) and len(layer) == maps.n_head for layer in maps.weights)
        and all(len(head) == T and all(len(row) == T for row in head) for layer in maps.weights for head in layer)
    )
    if not shape_ok:
        raise ReportInputError(
            f"attention weights {path}: weights must be [n_layer={maps.n_layer}][n_head={maps.n_head}][{T}][{T}]"
        )
    for layer_no, layer in enumerate(maps.weights, start=1):
        for h, head in enumerate(layer, start=1):
            for i, row in enumerate(head):
                if not all(_finite_number(v) and v >= 0 for v in row) or abs(sum(row) - 1.0) > ROW_SUM_TOLERANCE:
                    raise ReportInputError(
                        f"attention weights {path}: layer {layer_no} head {h} row {i + 1} is not a probability "
                        f"distribution (non-negative, summing to 1)"
                    )
    return maps


WORKED_EXAMPLE_KEYS = ("tokens", "inputs", "heads", "concat", "output", "published", "comparisons",
                       "implementations", "passed", "published_tolerance", "implementation_tolerance")


def load_worked_example(path: Path) -> dict:
    matrices = _read_json(path, "worked-example matrices", "verify_example")
    for key in WORKED_EXAMPLE_KEYS:
        if not isinstance(matrices, dict) or key not in matrices:
            raise ReportInputError(f"worked-example matrices {path} lack {key!r}: re-run `dvc repro verify_example`")
    return matrices


def load_run(paths: RunPaths, producer: str) -> Run:
    config = _read_json(paths.config, "run record", producer)
    if not isinstance(config, dict):
        raise ReportInputError(f"run record {paths.config} must hold a JSON object, got {type(config).__name__}")
    sample = _read_text(paths.samples, "sample", producer)
    if not sample.strip():
        raise ReportInputError(f"sample {paths.samples} is empty: re-run `dvc repro {producer}`")
    return Run(load_results(config, paths.config, producer), load_curve(paths.plots, producer), sample, config)


def load_inputs(paths: ReportPaths) -> ReportInputs:
    worked_example = load_worked_example(paths.worked_example_matrices)
    corpus = _read_text(paths.corpus, "corpus", "fetch_data")
    if len(corpus) < 100:
        raise ReportInputError(f"corpus {paths.corpus} has only {len(corpus)} characters: "
                               "re-run `dvc repro fetch_data`")
    return ReportInputs(
        attention=load_run(paths.attention, "train_attention"),
        no_attention=load_run(paths.no_attention, "train_no_attention"),
        attention_maps=load_attention_maps(paths.attention_weights),
        worked_example=worked_example,
        corpus=corpus,
    )
