"""The course lab's own files (its runs' records, curves, samples and maps are those of mha.artifacts.run
and mha.artifacts.attention, written by the same writers).

    artifacts/lab/scale.json          ScaleStatistics (mha.lab.scale), from the lab_scale stage
    artifacts/lab/<run>/order.json    OrderSensitivity of one controlled run, from lab_train@<run>
"""

from __future__ import annotations

from dataclasses import dataclass

from mha.artifacts.records import JsonArtifact
from mha.lab.scale import ScaleStatistics

SCALE_STATISTICS = JsonArtifact(ScaleStatistics, "scale statistics", "lab_scale")


@dataclass(frozen=True)
class OrderSensitivity:
    """Whether a trained model uses the order of the characters before the one it predicts.

    On `windows` fixed windows of validation text, `context` characters each, the loss (nats/char) of the
    prediction made at the window's last position, with the characters before it in their order and with
    them shuffled (one fixed permutation per window; the last character stays in place). A model whose
    output at that position cannot see order (self-attention alone, one layer, no positions) scores the
    same both ways; the gap is what order is worth to it.
    """

    windows: int
    context: int
    seed: int
    loss_in_order: float
    loss_shuffled: float

    def __post_init__(self) -> None:
        if self.windows < 1 or self.context < 2:
            raise ValueError("order sensitivity needs at least one window of at least two characters")

    @property
    def gap(self) -> float:
        return self.loss_shuffled - self.loss_in_order


ORDER_SENSITIVITY = JsonArtifact(OrderSensitivity, "order sensitivity", "lab_train")
