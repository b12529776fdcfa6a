"""artifacts/attention_weights.json: the trained model's attention maps on an excerpt of validation text."""

from __future__ import annotations

from dataclasses import dataclass

from mha.artifacts.records import JsonArtifact

# Rows sum to 1 up to float rounding; a transposed or unnormalised map misses by far more.
ROW_SUM_TOLERANCE = 1e-2


@dataclass(frozen=True)
class AttentionMaps:
    excerpt: str
    tokens: list[str]  # one character each, spelling the excerpt
    n_layer: int
    n_head: int
    weights: list[list[list[list[float]]]]  # (L, H, T, T), row = query, column = key

    def __post_init__(self) -> None:
        T = len(self.tokens)
        if T == 0 or "".join(self.tokens) != self.excerpt or any(len(t) != 1 for t in self.tokens):
            raise ValueError("tokens must spell the excerpt, one character each")
        shape_ok = len(self.weights) == self.n_layer and all(
            len(layer) == self.n_head and all(len(head) == T and all(len(row) == T for row in head) for head in layer)
            for layer in self.weights
        )
        if not shape_ok:
            raise ValueError(f"weights must be [n_layer={self.n_layer}][n_head={self.n_head}][{T}][{T}]")
        for layer_no, layer in enumerate(self.weights, start=1):
            for h, head in enumerate(layer, start=1):
                for i, row in enumerate(head, start=1):
                    if min(row) < 0 or abs(sum(row) - 1.0) > ROW_SUM_TOLERANCE:
                        raise ValueError(f"layer {layer_no} head {h} row {i} is not a probability distribution "
                                         "(non-negative, summing to 1)")


ATTENTION_MAPS = JsonArtifact(AttentionMaps, "attention weights", "train_attention")
