"""artifacts/worked_example.json: the worked example as verify_example computed it, and its verdicts.

Every comparison with a published matrix is one PublishedCheck under the matrix's one name
(mha.worked_example.published_name: "head 1 A", "head 2 S·√d_k", "output"), holding both matrices on
the published scale, so a reader lays them side by side without recomputing anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha.artifacts.records import JsonArtifact

Matrix = list[list[float]]
MaskedMatrix = list[list[float | None]]  # None is −∞: JSON has no infinity


@dataclass(frozen=True)
class WorkedInputs:
    X: Matrix  # (n, d_model)
    W_Q: list[Matrix]  # h × (d_model, d_k)
    W_K: list[Matrix]
    W_V: list[Matrix]
    W_O: Matrix  # (h·d_k, d_model)


@dataclass(frozen=True)
class HeadSteps:
    """One head's intermediates, in the course's order."""

    Q: Matrix  # (n, d_k)
    K: Matrix
    V: Matrix
    S: Matrix  # (n, n) scores, already divided by √d_k
    M: MaskedMatrix  # (n, n) causal mask
    S_masked: MaskedMatrix  # S + M
    A: Matrix  # (n, n) attention weights
    output: Matrix  # (n, d_k)


@dataclass(frozen=True)
class PublishedCheck:
    computed: Matrix  # on the published scale (the scores times √d_k, as the course prints them)
    published: Matrix
    max_abs_deviation: float
    passed: bool


@dataclass(frozen=True)
class WorkedExampleRecord:
    tokens: list[str]
    inputs: WorkedInputs
    heads: list[HeadSteps]
    concat: Matrix  # (n, h·d_k)
    output: Matrix  # (n, d_model)
    checks: dict[str, PublishedCheck]  # by published name
    implementations: dict[str, float]  # PyTorch's implementation -> max |difference| from the reference
    passed: bool
    published_tolerance: float
    implementation_tolerance: float

    def __post_init__(self) -> None:
        if len(self.heads) != len(self.inputs.W_Q) or not self.checks:
            raise ValueError(f"{len(self.heads)} heads for {len(self.inputs.W_Q)} W_Q, and {len(self.checks)} checks")


WORKED_EXAMPLE = JsonArtifact(WorkedExampleRecord, "worked-example matrices", "verify_example")
