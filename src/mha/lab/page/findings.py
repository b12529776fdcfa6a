"""The numbers each of the lab's questions is answered with, measured from its inputs; no words here.

The margins below decide what the paragraphs may say; each is stated on the page beside the claim it backs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha.lab.page.inputs import LabInputs, LabRun
from mha.lab.page.roles import LabRoles
from mha.lab.scale import ScaleStatistics, entropy
from mha.report.heads import all_head_stats

# Two best validation losses closer than this (nats/char) count as equally good: the lab's runs are short
# and their validation estimates move by about a hundredth between evaluations.
LOSS_MARGIN = 0.02
# A model "uses order" when shuffling the characters before the predicted one raises its loss by more than
# this (nats/char); a model blind to order would be at 0 up to the noise of the fixed windows.
ORDER_GAP_THRESHOLD = 0.05
# Var(q·k) "follows d_k" when every measured value lies within this many standard errors of d_k; the scaled
# variance is the same measurement divided by d_k, so it is "about 1" by the same test.
VARIANCE_Z = 4.0
# A softmax row whose largest weight averages more than this has "saturated" towards one key.
SATURATED_WEIGHT = 0.9
# Two mean attention entropies (nats) closer than this count as equally spread.
ENTROPY_MARGIN = 0.05
# mha.model.POSITIONS' value for no positional information (not imported: mha.model loads torch).
NO_POSITIONS = "none"


@dataclass(frozen=True)
class ScaleFindings:
    """The random-vector statistics (mha.lab.scale), summed up at the ends of the d_k range and at the peak."""

    d_k_first: int
    d_k_last: int
    row_length: int
    variance_ratio_low: float  # min over d_k of Var(q·k) / d_k
    variance_ratio_high: float
    variance_worst_z: float  # max over d_k of |Var(q·k) − d_k| / standard error
    variance_worst_d_k: int
    variance_growth: float  # Var(q·k) at the largest d_k over Var(q·k) at the smallest
    scaled_variance_low: float
    scaled_variance_high: float
    weight_unscaled_last: float  # mean largest softmax weight at the largest d_k
    weight_scaled_last: float
    entropy_unscaled_last: float  # nats
    entropy_scaled_last: float
    jacobian_unscaled_first: float
    jacobian_unscaled_peak: float
    jacobian_unscaled_peak_d_k: int
    jacobian_unscaled_last: float
    jacobian_scaled_low: float
    jacobian_scaled_high: float

    @property
    def uniform_entropy(self) -> float:
        return float(np.log(self.row_length))


def scale_findings(stats: ScaleStatistics) -> ScaleFindings:
    d_k = np.asarray(stats.d_k, dtype=np.float64)
    variance = np.asarray(stats.score_variance)
    z = np.abs(variance - d_k) / np.asarray(stats.score_variance_standard_error)
    jacobian = stats.unscaled.jacobian_spectral_norm
    peak = int(np.argmax(jacobian))
    return ScaleFindings(
        d_k_first=stats.d_k[0],
        d_k_last=stats.d_k[-1],
        row_length=stats.row_length,
        variance_ratio_low=float((variance / d_k).min()),
        variance_ratio_high=float((variance / d_k).max()),
        variance_worst_z=float(z.max()),
        variance_worst_d_k=stats.d_k[int(np.argmax(z))],
        variance_growth=float(variance[-1] / variance[0]),
        scaled_variance_low=min(stats.scaled_score_variance),
        scaled_variance_high=max(stats.scaled_score_variance),
        weight_unscaled_last=stats.unscaled.largest_weight[-1],
        weight_scaled_last=stats.scaled.largest_weight[-1],
        entropy_unscaled_last=stats.unscaled.entropy[-1],
        entropy_scaled_last=stats.scaled.entropy[-1],
        jacobian_unscaled_first=jacobian[0],
        jacobian_unscaled_peak=jacobian[peak],
        jacobian_unscaled_peak_d_k=stats.d_k[peak],
        jacobian_unscaled_last=jacobian[-1],
        jacobian_scaled_low=min(stats.scaled.jacobian_spectral_norm),
        jacobian_scaled_high=max(stats.scaled.jacobian_spectral_norm),
    )


def mean_attention_entropy(run: LabRun) -> float:
    """Mean entropy (nats) of the trained model's attention rows on the excerpt, over every layer and head."""
    weights = np.asarray(run.maps.weights, dtype=np.float64)  # (L, H, T, T)
    return float(entropy(weights).mean())


@dataclass(frozen=True)
class TrainedScaleFindings:
    """The trained pair: the same model with and without the scale."""

    n_head: int
    d_k: int
    scaled_best: float
    unscaled_best: float
    scaled_entropy: float  # mean_attention_entropy
    unscaled_entropy: float

    @property
    def cost(self) -> float:
        """How much higher the best validation loss is without the scale (negative: lower)."""
        return self.unscaled_best - self.scaled_best


def trained_scale_findings(scaled: LabRun, unscaled: LabRun) -> TrainedScaleFindings:
    return TrainedScaleFindings(
        n_head=unscaled.model["n_head"],
        d_k=unscaled.d_k,
        scaled_best=scaled.results.best_val_loss,
        unscaled_best=unscaled.results.best_val_loss,
        scaled_entropy=mean_attention_entropy(scaled),
        unscaled_entropy=mean_attention_entropy(unscaled),
    )


@dataclass(frozen=True)
class HeadsRun:
    name: str
    n_head: int
    d_k: int
    best_val_loss: float
    tokens_per_second: float
    parameters: int
    heads_by_kind: dict[str, int]  # mha.report.heads' kinds (previous, self, spread) -> how many heads, all layers
    mean_distance: float  # over every head: how far back a head looks, in characters
    effective_keys: float  # over every head


@dataclass(frozen=True)
class HeadsFindings:
    runs: tuple[HeadsRun, ...]  # fewest heads first
    reference: HeadsRun

    @property
    def best(self) -> HeadsRun:
        return min(self.runs, key=lambda r: (r.best_val_loss, r.n_head))

    @property
    def fastest(self) -> HeadsRun:
        return max(self.runs, key=lambda r: (r.tokens_per_second, -r.n_head))

    @property
    def slowest(self) -> HeadsRun:
        return min(self.runs, key=lambda r: (r.tokens_per_second, r.n_head))


def heads_run(run: LabRun) -> HeadsRun:
    stats = all_head_stats(run.maps.weights)
    kinds = {kind: 0 for kind in ("previous", "self", "spread")}
    for s in stats:
        kinds[s.kind] += 1
    return HeadsRun(
        name=run.name,
        n_head=run.model["n_head"],
        d_k=run.d_k,
        best_val_loss=run.results.best_val_loss,
        tokens_per_second=run.results.tokens_per_second,
        parameters=run.results.parameters,
        heads_by_kind=kinds,
        mean_distance=float(np.mean([s.mean_distance for s in stats])),
        effective_keys=float(np.mean([s.effective_keys for s in stats])),
    )


@dataclass(frozen=True)
class PositionsRun:
    name: str
    positions: str  # learned, sinusoidal or none (mha.model.POSITIONS)
    best_val_loss: float
    loss_in_order: float
    loss_shuffled: float
    gap: float  # loss_shuffled − loss_in_order: what order is worth to the model


@dataclass(frozen=True)
class PositionsFindings:
    runs: tuple[PositionsRun, ...]  # the reference first

    @property
    def reference(self) -> PositionsRun:
        return self.runs[0]

    @property
    def without(self) -> PositionsRun | None:
        """The run with no positional information, if the lab has one."""
        return next((r for r in self.runs if r.positions == NO_POSITIONS), None)

    @property
    def others(self) -> tuple[PositionsRun, ...]:
        """The runs with another kind of positions than the reference's, the one without excepted."""
        return tuple(r for r in self.runs[1:] if r.positions != NO_POSITIONS)


def positions_run(run: LabRun) -> PositionsRun:
    return PositionsRun(name=run.name, positions=run.model["positions"], best_val_loss=run.results.best_val_loss,
                        loss_in_order=run.order.loss_in_order, loss_shuffled=run.order.loss_shuffled,
                        gap=run.order.gap)


@dataclass(frozen=True)
class LabFindings:
    scale: ScaleFindings
    trained_scale: TrainedScaleFindings
    heads: HeadsFindings
    positions: PositionsFindings


def lab_findings(inputs: LabInputs, roles: LabRoles) -> LabFindings:
    runs = inputs.runs
    heads = tuple(heads_run(runs[name]) for name in roles.heads)
    return LabFindings(
        scale=scale_findings(inputs.scale),
        trained_scale=trained_scale_findings(runs[roles.scaled], runs[roles.unscaled]),
        heads=HeadsFindings(runs=heads, reference=next(r for r in heads if r.name == roles.reference)),
        positions=PositionsFindings(runs=tuple(positions_run(runs[name]) for name in roles.positions)),
    )
