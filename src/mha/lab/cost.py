"""What attention costs as the sequence grows: the records of the lab_cost stage and the fits the page states.
No torch here (the page reads these); mha.lab.measure_cost measures them.

Seed 003 of the course says attention's time and memory grow with the square of the sequence length T, which is
why a model has a maximum length (block_size). For one attention layer at the model's sizes, lab_cost measures
one forward and backward pass at each length:
- time: the median of `repeats` passes (wall clock; the device waits for each pass to finish);
- memory: the bytes the pass keeps for the backward pass (every tensor autograd saves, each storage counted once,
  the layer's weights left out). They come from the tensors' sizes, so they are the same on every machine; on a
  GPU the allocator's peak is recorded beside them.
Two kernels compute the same attention (mha.model): "explicit", the course's steps, which forms the T × T weights
and keeps them, and "sdpa", PyTorch's fused scaled_dot_product_attention, which keeps only what grows with T.

The fits: on log-log axes a cost that grows as T^p is a line of slope p (`loglog_slope`). Each cost is also split
into a part linear in T (the projections, Q, K, V, the concatenation, W_O) and a part quadratic in T (Q Kᵀ, the
softmax, A V): c(T) ≈ a·T + b·T² (`linear_and_quadratic`), fitted to relative error, with neither part negative.
For the bytes kept the split is exact (every tensor is B·T·something or B·H·T·T floats): the explicit kernel's
quadratic part is the weights A, 4 bytes × batch × heads per T².
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mha.artifacts.records import JsonArtifact
from mha.schema import COST_MIN_LENGTHS

KERNEL_NAMES = ("explicit", "sdpa")  # mha.model.KERNELS, named here without importing torch
# The slope "at long lengths" is fitted over this many of the longest lengths, where the quadratic part leads.
LONG_LENGTHS = COST_MIN_LENGTHS


@dataclass(frozen=True)
class KernelCost:
    """One kernel's measurements, one value per length of AttentionCost.lengths."""

    kernel: str  # "explicit" or "sdpa" (KERNEL_NAMES)
    seconds: tuple[float, ...]  # median wall time of one forward and backward pass
    saved_bytes: tuple[int, ...]  # kept for the backward pass, weights excepted
    peak_bytes: tuple[int, ...] | None  # the CUDA allocator's peak above what was allocated before; None on a CPU

    def __post_init__(self) -> None:
        if self.kernel not in KERNEL_NAMES:
            raise ValueError(f"kernel must be one of {', '.join(KERNEL_NAMES)}, got {self.kernel!r}")
        lengths = {len(self.seconds), len(self.saved_bytes)}
        if self.peak_bytes is not None:
            lengths.add(len(self.peak_bytes))
        if len(lengths) != 1:
            raise ValueError(f"kernel {self.kernel} has measurements of different lengths")
        if min(self.seconds) <= 0 or min(self.saved_bytes) <= 0:
            raise ValueError(f"kernel {self.kernel} has a time or a memory that is not positive")


@dataclass(frozen=True)
class AttentionCost:
    """lab_cost's measurements: one attention layer (model: n_embd, n_head) at each length, on ``device``."""

    lengths: tuple[int, ...]  # T, increasing
    batch: int
    n_embd: int
    n_head: int
    repeats: int
    seed: int
    device: str  # "cpu" or "cuda"
    threads: int
    kernels: tuple[KernelCost, ...]  # in KERNEL_NAMES' order

    def __post_init__(self) -> None:
        if len(self.lengths) < LONG_LENGTHS or list(self.lengths) != sorted(set(self.lengths)):
            raise ValueError(f"lengths must be at least {LONG_LENGTHS} different increasing values, "
                             f"got {list(self.lengths)}")
        if any(len(k.seconds) != len(self.lengths) for k in self.kernels):
            raise ValueError("every kernel needs one measurement per length")

    def kernel(self, name: str) -> KernelCost:
        return next(k for k in self.kernels if k.kernel == name)


# lab_cost writes it, the lab page reads it: COST_FILE in the lab's artifacts folder (dvc.yaml names the same
# file, ${path.lab_artifacts}/cost.json, as it does scale.json); its metrics, the same name in the metrics folder.
ATTENTION_COST = JsonArtifact(AttentionCost, "attention cost", "lab_cost")
COST_FILE = "cost.json"


def loglog_slope(lengths: Sequence[float], values: Sequence[float]) -> float:
    """The exponent p of values ≈ c·lengths^p: the least-squares slope of log(values) against log(lengths)."""
    x, y = np.log(np.asarray(lengths, dtype=np.float64)), np.log(np.asarray(values, dtype=np.float64))
    return float(np.polyfit(x, y, 1)[0])


@dataclass(frozen=True)
class LinearQuadratic:
    """t(T) ≈ linear·T + quadratic·T² (seconds per character and per character²)."""

    linear: float
    quadratic: float

    def share_quadratic(self, length: int) -> float:
        """The quadratic part's share of the fitted time at ``length``."""
        a, b = self.linear * length, self.quadratic * length**2
        return b / (a + b) if a + b > 0 else 0.0


def linear_and_quadratic(lengths: Sequence[int], seconds: Sequence[float]) -> LinearQuadratic:
    """The fit of seconds ≈ a·T + b·T² with a, b ≥ 0, each point weighted by 1/seconds (relative error, so the
    short lengths count as much as the long ones)."""
    T = np.asarray(lengths, dtype=np.float64)
    t = np.asarray(seconds, dtype=np.float64)
    design = np.stack([T, T**2], axis=1) / t[:, None]  # (n, 2): each row divided by its own time
    target = np.ones_like(t)
    a, b = np.linalg.lstsq(design, target, rcond=None)[0]
    if a < 0 or b < 0:  # the constrained optimum lies on an edge: the better of the two one-term fits
        fits = []
        for column in (0, 1):
            coef = float(design[:, column] @ target / (design[:, column] @ design[:, column]))
            residual = float(np.sum((design[:, column] * coef - target) ** 2))
            fits.append((residual, column, coef))
        _, column, coef = min(fits)
        a, b = (coef, 0.0) if column == 0 else (0.0, coef)
    return LinearQuadratic(linear=float(a), quadratic=float(b))


@dataclass(frozen=True)
class KernelFindings:
    """What the page says of one kernel."""

    kernel: str
    time_slope: float  # over every length
    time_slope_long: float  # over the LONG_LENGTHS longest
    time_fit: LinearQuadratic  # seconds
    memory_slope_long: float  # of the bytes kept, over the LONG_LENGTHS longest
    memory_fit: LinearQuadratic  # bytes kept
    longest: int
    seconds_longest: float
    saved_longest: int

    @property
    def bytes_per_square(self) -> float:
        """The quadratic part of the bytes kept, per T² (the explicit kernel: 4 × batch × heads)."""
        return self.memory_fit.quadratic


def kernel_findings(cost: AttentionCost, kernel: KernelCost) -> KernelFindings:
    lengths = cost.lengths
    long = slice(-LONG_LENGTHS, None)
    return KernelFindings(
        kernel=kernel.kernel,
        time_slope=loglog_slope(lengths, kernel.seconds),
        time_slope_long=loglog_slope(lengths[long], kernel.seconds[long]),
        time_fit=linear_and_quadratic(lengths, kernel.seconds),
        memory_slope_long=loglog_slope(lengths[long], kernel.saved_bytes[long]),
        memory_fit=linear_and_quadratic(lengths, kernel.saved_bytes),
        longest=lengths[-1],
        seconds_longest=kernel.seconds[-1],
        saved_longest=kernel.saved_bytes[-1],
    )


@dataclass(frozen=True)
class Doubling:
    """What doubling the context from ``length`` costs one kernel: the ratios of time and of memory kept."""

    kernel: str
    length: int
    time_ratio: float
    memory_ratio: float


def doubling(cost: AttentionCost, kernel: KernelCost, length: int) -> Doubling | None:
    """From ``length`` (block_size) to twice it, where both were measured; None otherwise."""
    if length not in cost.lengths or 2 * length not in cost.lengths:
        return None
    i, j = cost.lengths.index(length), cost.lengths.index(2 * length)
    return Doubling(kernel=kernel.kernel, length=length, time_ratio=kernel.seconds[j] / kernel.seconds[i],
                    memory_ratio=kernel.saved_bytes[j] / kernel.saved_bytes[i])


def cost_metrics(cost: AttentionCost) -> dict:
    """The stage's summary in git (metrics/lab/cost.json): each kernel's fitted exponents and its figures at the
    longest length, the numbers the lab page states. Its times are this machine's, so DVC keeps it as an output, not
    a metric (`dvc metrics show` shows only what every machine reproduces)."""
    metrics = {"lengths": list(cost.lengths), "device": cost.device}
    for kernel in cost.kernels:
        f = kernel_findings(cost, kernel)
        metrics[kernel.kernel] = {
            "time_exponent": round(f.time_slope, 4),
            "time_exponent_long": round(f.time_slope_long, 4),
            "quadratic_time_share_longest": round(f.time_fit.share_quadratic(f.longest), 4),
            "memory_exponent_long": round(f.memory_slope_long, 4),
            "memory_bytes_per_square": round(f.bytes_per_square, 4),
            "quadratic_memory_share_longest": round(f.memory_fit.share_quadratic(f.longest), 4),
            "seconds_longest": round(f.seconds_longest, 6),
            "saved_mib_longest": round(f.saved_longest / 2**20, 4),
        }
    return metrics
