"""The numbers each of the lab's questions is answered with, measured from its inputs; no words here.

Every trained run was trained once per seed; each of its numbers is a `Spread` over the seeds, and two runs'
losses are judged against `Noise`, the seed-to-seed spread measured over the whole lab. The other margins
below decide what the paragraphs may say; each is stated on the page beside the claim it backs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mha.lab.page.inputs import LabInputs, LabRun, SeedRun
from mha.lab.page.roles import LabRoles
from mha.lab.scale import ScaleStatistics, entropy
from mha.report.heads import all_head_stats

# Two runs' mean best losses count as different when they are more than this many standard errors of their
# difference apart, the standard error from the seed-to-seed spread (Noise): about a 5% chance of calling a tie
# a difference.
DIFFERENCE_Z = 2.0
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
# mha.schema.POSITIONS' value for no positional information.
NO_POSITIONS = "none"


@dataclass(frozen=True)
class Spread:
    """One measurement of a run over its seeds."""

    values: tuple[float, ...]  # one per seed, in the order of lab.seeds

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    @property
    def sd(self) -> float:
        """The sample standard deviation over the seeds (n − 1)."""
        return float(np.std(self.values, ddof=1))

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)


def spread(run: LabRun, measure) -> Spread:
    return Spread(run.values(measure))


def best_loss(seed: SeedRun) -> float:
    return seed.results.best_val_loss


@dataclass(frozen=True)
class Noise:
    """The seed-to-seed spread of the best validation loss, pooled over every trained run of the lab."""

    sd: float  # √(mean over runs of each run's sample variance over its seeds)
    seeds: int  # per run
    runs: int

    @property
    def margin(self) -> float:
        """The smallest difference of two runs' mean best losses that counts: DIFFERENCE_Z standard errors of the
        difference of two means of `seeds` values each, sd · √(2 / seeds)."""
        return DIFFERENCE_Z * self.sd * math.sqrt(2 / self.seeds)


def noise(runs: Sequence[LabRun]) -> Noise:
    variances = [spread(run, best_loss).sd ** 2 for run in runs]
    return Noise(sd=math.sqrt(float(np.mean(variances))), seeds=len(runs[0].seeds), runs=len(runs))


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


def mean_attention_entropy(run: SeedRun) -> float:
    """Mean entropy (nats) of the trained model's attention rows on the excerpt, over every layer and head."""
    weights = np.asarray(run.maps.weights, dtype=np.float64)  # (L, H, T, T)
    return float(entropy(weights).mean())


@dataclass(frozen=True)
class TrainedScaleFindings:
    """The trained pair: the same model with and without the scale."""

    n_head: int
    d_k: int
    scaled_best: Spread
    unscaled_best: Spread
    scaled_entropy: Spread  # mean_attention_entropy
    unscaled_entropy: Spread

    @property
    def cost(self) -> float:
        """How much higher the mean best validation loss is without the scale (negative: lower)."""
        return self.unscaled_best.mean - self.scaled_best.mean


def trained_scale_findings(scaled: LabRun, unscaled: LabRun) -> TrainedScaleFindings:
    return TrainedScaleFindings(
        n_head=unscaled.model["n_head"],
        d_k=unscaled.d_k,
        scaled_best=spread(scaled, best_loss),
        unscaled_best=spread(unscaled, best_loss),
        scaled_entropy=spread(scaled, mean_attention_entropy),
        unscaled_entropy=spread(unscaled, mean_attention_entropy),
    )


@dataclass(frozen=True)
class HeadsRun:
    name: str
    n_head: int
    d_k: int
    best_val_loss: Spread
    parameters: int
    heads_by_kind: dict[str, int]  # mha.report.heads' kinds (previous, self, spread) -> how many heads, every seed's
    mean_distance: Spread  # the mean over a seed's heads of how far back a head looks, in characters
    effective_keys: Spread  # the mean over a seed's heads


@dataclass(frozen=True)
class HeadsFindings:
    runs: tuple[HeadsRun, ...]  # fewest heads first
    reference: HeadsRun

    @property
    def best(self) -> HeadsRun:
        return min(self.runs, key=lambda r: (r.best_val_loss.mean, r.n_head))


def heads_run(run: LabRun) -> HeadsRun:
    stats = [all_head_stats(seed.maps.weights) for seed in run.seeds]  # each seed's heads
    kinds = {kind: 0 for kind in ("previous", "self", "spread")}
    for head in (head for heads in stats for head in heads):
        kinds[head.kind] += 1
    return HeadsRun(
        name=run.name,
        n_head=run.model["n_head"],
        d_k=run.d_k,
        best_val_loss=spread(run, best_loss),
        parameters=run.record.parameters,
        heads_by_kind=kinds,
        mean_distance=Spread(tuple(float(np.mean([h.mean_distance for h in heads])) for heads in stats)),
        effective_keys=Spread(tuple(float(np.mean([h.effective_keys for h in heads])) for heads in stats)),
    )


@dataclass(frozen=True)
class PositionsRun:
    name: str
    positions: str  # learned, sinusoidal or none (mha.schema.POSITIONS)
    best_val_loss: Spread
    loss_in_order: Spread
    loss_shuffled: Spread
    gap: Spread  # loss_shuffled − loss_in_order: what order is worth to the model


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
    return PositionsRun(name=run.name, positions=run.model["positions"], best_val_loss=spread(run, best_loss),
                        loss_in_order=spread(run, lambda seed: seed.order.loss_in_order),
                        loss_shuffled=spread(run, lambda seed: seed.order.loss_shuffled),
                        gap=spread(run, lambda seed: seed.order.gap))


@dataclass(frozen=True)
class LabFindings:
    scale: ScaleFindings
    trained_scale: TrainedScaleFindings
    heads: HeadsFindings
    positions: PositionsFindings
    noise: Noise
    steps: int  # the shortest schedule any seed of any run trained for (train.max_iters in its record)


def lab_findings(inputs: LabInputs, roles: LabRoles) -> LabFindings:
    runs = inputs.runs
    heads = tuple(heads_run(runs[name]) for name in roles.heads)
    return LabFindings(
        scale=scale_findings(inputs.scale),
        trained_scale=trained_scale_findings(runs[roles.scaled], runs[roles.unscaled]),
        heads=HeadsFindings(runs=heads, reference=next(r for r in heads if r.name == roles.reference)),
        positions=PositionsFindings(runs=tuple(positions_run(runs[name]) for name in roles.positions)),
        noise=noise(list(runs.values())),
        steps=min(seed.record.train["max_iters"] for run in runs.values() for seed in run.seeds),
    )
