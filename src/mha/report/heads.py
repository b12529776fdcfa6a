"""Statistics of one attention head on the excerpt, from which the report writes its reading.

For a causal (T, T) map A (row = query position i, column = key position j <= i):
  mean distance      mean over rows of sum_j A[i, j] (i - j): how far back the head looks, in characters
  previous share     mean over rows i >= 1 of A[i, i - 1]: weight on the character just before
  self share         mean over rows of A[i, i]: weight on the query's own character
  effective keys     mean over rows of exp(entropy of row i): how many characters it spreads over
  above diagonal     total weight above the diagonal (0 for a causal head; shown as a check)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# A head "mostly" does something when at least half of its weight goes there.
DOMINANT_SHARE = 0.5


@dataclass(frozen=True)
class HeadStats:
    layer: int  # counted from 1
    head: int  # counted from 1
    mean_distance: float
    previous_share: float
    self_share: float
    effective_keys: float
    above_diagonal: float

    @property
    def kind(self) -> str:
        """The head's dominant pattern, a message-catalog key suffix."""
        if self.previous_share >= DOMINANT_SHARE:
            return "previous"
        if self.self_share >= DOMINANT_SHARE:
            return "self"
        return "spread"


def head_stats(A, layer: int, head: int) -> HeadStats:
    A = np.asarray(A, dtype=np.float64)
    T = A.shape[0]  # (T, T)
    i, j = np.indices((T, T))
    distance = np.where(j <= i, i - j, 0)  # (T, T)
    safe = np.where(A > 0, A, 1.0)
    entropy = -(A * np.log(safe)).sum(axis=1)  # (T,)
    return HeadStats(
        layer=layer,
        head=head,
        mean_distance=float((A * distance).sum(axis=1).mean()),
        previous_share=float(np.diagonal(A, offset=-1).mean()) if T > 1 else 0.0,
        self_share=float(np.diagonal(A).mean()),
        effective_keys=float(np.exp(entropy).mean()),
        above_diagonal=float(np.triu(A, k=1).sum()),
    )


def all_head_stats(weights) -> list[HeadStats]:
    """weights: [L][H][T][T] -> one HeadStats per (layer, head), layer-major."""
    return [
        head_stats(A, layer, head)
        for layer, heads in enumerate(weights, start=1)
        for head, A in enumerate(heads, start=1)
    ]
