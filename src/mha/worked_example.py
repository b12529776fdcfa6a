"""The course's published worked example ("Life is awesome"), as data.

The numbers live in ``data/worked_example.json`` beside this module, copied
exactly from the course; the functions here load them and compare them with
what ``mha.reference`` computes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from mha import reference

# The published values are rounded to 3 decimals, so half a unit in the last place.
PUBLISHED_TOLERANCE = 5e-4


@dataclass(frozen=True)
class WorkedExample:
    tokens: list[str]
    X: np.ndarray  # (n, d_model)
    W_Q: list[np.ndarray]  # h × (d_model, d_k)
    W_K: list[np.ndarray]  # h × (d_model, d_k)
    W_V: list[np.ndarray]  # h × (d_model, d_k)
    W_O: np.ndarray  # (h·d_k, d_model)
    published: dict[str, np.ndarray]  # name -> published matrix, e.g. "head 1 A"

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d_model(self) -> int:
        return self.X.shape[1]

    @property
    def h(self) -> int:
        return len(self.W_Q)

    @property
    def d_k(self) -> int:
        return self.W_Q[0].shape[1]


def published_name(head: int | None, key: str) -> str:
    """The display name of a published matrix: 'head 1 A', 'head 2 S·√d_k', 'output'."""
    label = {"S_times_sqrt_dk": "S·√d_k"}.get(key, key)
    return label if head is None else f"head {head} {label}"


def load(path: str | Path | None = None) -> WorkedExample:
    """Load the worked example; ``path`` overrides the packaged copy (used to test corrupted data)."""
    if path is None:
        text = resources.files("mha").joinpath("data/worked_example.json").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    raw = json.loads(text)
    inputs = raw["inputs"]
    matrices = lambda items: [np.asarray(m, dtype=np.float64) for m in items]  # noqa: E731
    published = {}
    for head, values in enumerate(raw["published"]["heads"], start=1):
        for key, matrix in values.items():
            published[published_name(head, key)] = np.asarray(matrix, dtype=np.float64)
    published[published_name(None, "output")] = np.asarray(raw["published"]["output"], dtype=np.float64)
    return WorkedExample(
        tokens=list(raw["tokens"]),
        X=np.asarray(inputs["X"], dtype=np.float64),
        W_Q=matrices(inputs["W_Q"]),
        W_K=matrices(inputs["W_K"]),
        W_V=matrices(inputs["W_V"]),
        W_O=np.asarray(inputs["W_O"], dtype=np.float64),
        published=published,
    )


def trace(example: WorkedExample) -> reference.MultiHeadTrace:
    return reference.multi_head_trace(example.X, example.W_Q, example.W_K, example.W_V, example.W_O, causal=True)


def computed_for_published(example: WorkedExample, result: reference.MultiHeadTrace) -> dict[str, np.ndarray]:
    """The computed matrix that each published matrix should equal, under the same names."""
    computed = {}
    for head, t in enumerate(result.heads, start=1):
        computed[published_name(head, "Q")] = t.Q
        computed[published_name(head, "K")] = t.K
        computed[published_name(head, "V")] = t.V
        # The course prints the scores before the division by √d_k, to keep them integers.
        computed[published_name(head, "S_times_sqrt_dk")] = t.S * math.sqrt(example.d_k)
        computed[published_name(head, "A")] = t.A
        computed[published_name(head, "output")] = t.output
    computed[published_name(None, "output")] = result.output
    return computed


@dataclass(frozen=True)
class Mismatch:
    matrix: str
    row: int  # counted from 1, as the course does
    column: int  # counted from 1
    published: float
    computed: float

    def line(self) -> str:
        """What is wrong: the cell, both values and the tolerance."""
        return (f"{self.matrix}: cell (row {self.row}, column {self.column}) is published as {self.published:g} "
                f"but computes to {self.computed:.6f} (off by {abs(self.computed - self.published):.6f}, "
                f"tolerance {PUBLISHED_TOLERANCE})")


@dataclass(frozen=True)
class Comparison:
    matrix: str  # published_name
    computed: np.ndarray  # on the published scale
    published: np.ndarray
    max_abs_deviation: float
    passed: bool
    mismatches: list[Mismatch]


def compare_published(example: WorkedExample, result: reference.MultiHeadTrace) -> list[Comparison]:
    """Compare every published matrix with the computed one, cell by cell."""
    computed = computed_for_published(example, result)
    comparisons = []
    for name, published in example.published.items():
        got = computed[name]
        if got.shape != published.shape:
            raise ValueError(f"{name} is published with shape {published.shape} but computes to shape {got.shape}")
        deviation = np.abs(got - published)
        bad = np.argwhere(deviation > PUBLISHED_TOLERANCE)
        mismatches = [Mismatch(name, int(i) + 1, int(j) + 1, float(published[i, j]), float(got[i, j])) for i, j in bad]
        comparisons.append(Comparison(name, got, published, float(deviation.max()), not mismatches, mismatches))
    return comparisons
