"""What attention costs as the sequence grows: the records of the lab_cost stage and the fits the page states.
No torch here (the page reads these); mha.lab.measure_cost measures them.

Seed 003 of the course says attention's time and memory grow with the square of the sequence length T, which is
why a model has a maximum length (block_size). For one attention layer at the model's sizes, lab_cost measures
one forward and backward pass at each length, two ways that come out the same on every machine, and one that
does not:
- memory: the bytes the pass keeps for the backward pass (every tensor autograd saves, each storage counted once,
  the layer's weights left out), from the tensors' sizes;
- work: the floating-point operations of its matrix products, counted by PyTorch (torch.utils.flop_counter) as
  the course's steps run them: the projections (X W_Q, X W_K, X W_V, Y W_O: `mm`, linear in T) and the scores'
  products (Q Kᵀ and A V: `baddbmm`, `bmm`, which grow as T²);
- time: the median of `repeats` passes, this machine's figure. Like a training run's speed it goes to the stage's
  run log (`runs/`, git-ignored; mha.artifacts.runlog says why), never into a file DVC hashes, so the page and
  every output stay byte for byte the same wherever the lab is reproduced.
Two kernels compute the same attention (mha.model): "explicit", the course's steps, which forms the weights A
(T × T per head) and keeps them, and "sdpa", PyTorch's fused scaled_dot_product_attention, which computes A block
by block and keeps only what grows with T. Both do the same products (the fused kernel's are not counted: its
fused operator has no formula in the counter); the memory they keep differs.

The fits: on log-log axes a cost that grows as T^p is a line of slope p (`loglog_slope`). Each cost splits into a
part linear in T and a part quadratic in T: c(T) ≈ a·T + b·T² (`linear_and_quadratic`), fitted to relative error
with neither part negative. For bytes and operations the split is exact: the explicit kernel keeps 4 bytes ×
batch × heads per T² (the weights A), and its scores' products do 12 · batch · d_model operations per T².
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
    """One kernel's memory, one value per length of AttentionCost.lengths."""

    kernel: str  # "explicit" or "sdpa" (KERNEL_NAMES)
    saved_bytes: tuple[int, ...]  # kept for the backward pass, weights excepted

    def __post_init__(self) -> None:
        if self.kernel not in KERNEL_NAMES:
            raise ValueError(f"kernel must be one of {', '.join(KERNEL_NAMES)}, got {self.kernel!r}")
        if not self.saved_bytes or min(self.saved_bytes) <= 0:
            raise ValueError(f"kernel {self.kernel} has a memory that is not positive")


@dataclass(frozen=True)
class AttentionCost:
    """lab_cost's measurements that every machine reproduces: one attention layer (model: n_embd, n_head) at each
    length, a batch of ``batch``."""

    lengths: tuple[int, ...]  # T, increasing
    batch: int
    n_embd: int
    n_head: int
    linear_flops: tuple[int, ...]  # the projections' products (mm), per length
    square_flops: tuple[int, ...]  # the scores' products (Q Kᵀ, A V: baddbmm, bmm), per length
    kernels: tuple[KernelCost, ...]  # in KERNEL_NAMES' order

    def __post_init__(self) -> None:
        if len(self.lengths) < LONG_LENGTHS or list(self.lengths) != sorted(set(self.lengths)):
            raise ValueError(f"lengths must be at least {LONG_LENGTHS} different increasing values, "
                             f"got {list(self.lengths)}")
        per_length = [self.linear_flops, self.square_flops, *(k.saved_bytes for k in self.kernels)]
        if any(len(values) != len(self.lengths) for values in per_length):
            raise ValueError("every measurement needs one value per length")
        if min(self.linear_flops) <= 0 or min(self.square_flops) <= 0:
            raise ValueError("an operation count is not positive")

    def kernel(self, name: str) -> KernelCost:
        return next(k for k in self.kernels if k.kernel == name)

    @property
    def flops(self) -> tuple[int, ...]:
        return tuple(a + b for a, b in zip(self.linear_flops, self.square_flops, strict=True))


@dataclass(frozen=True)
class CostTimes:
    """This machine's times, the stage's run log (mha.artifacts.runlog's reason): never hashed by DVC."""

    lengths: tuple[int, ...]
    repeats: int
    device: str
    threads: int
    cpu: str | None
    seconds: dict[str, tuple[float, ...]]  # kernel -> the median of `repeats` passes per length


# lab_cost writes it, the lab page reads it: COST_FILE in the lab's artifacts folder (dvc.yaml names the same
# file, ${path.lab_artifacts}/cost.json, as it does scale.json); its summary, the same name in the metrics folder;
# its times, the run log of COST_FILE (runs/artifacts/lab/cost.json).
ATTENTION_COST = JsonArtifact(AttentionCost, "attention cost", "lab_cost")
COST_TIMES = JsonArtifact(CostTimes, "attention cost's times", "lab_cost")
COST_FILE = "cost.json"


def loglog_slope(lengths: Sequence[float], values: Sequence[float]) -> float:
    """The exponent p of values ≈ c·lengths^p: the least-squares slope of log(values) against log(lengths)."""
    x, y = np.log(np.asarray(lengths, dtype=np.float64)), np.log(np.asarray(values, dtype=np.float64))
    return float(np.polyfit(x, y, 1)[0])


@dataclass(frozen=True)
class LinearQuadratic:
    """c(T) ≈ linear·T + quadratic·T²."""

    linear: float
    quadratic: float

    def share_quadratic(self, length: int) -> float:
        """The quadratic part's share of the fitted cost at ``length``."""
        a, b = self.linear * length, self.quadratic * length**2
        return b / (a + b) if a + b > 0 else 0.0


def linear_and_quadratic(lengths: Sequence[int], values: Sequence[float]) -> LinearQuadratic:
    """The fit of values ≈ a·T + b·T² with a, b ≥ 0, each point weighted by 1/value (relative error, so the short
    lengths count as much as the long ones)."""
    T = np.asarray(lengths, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    design = np.stack([T, T**2], axis=1) / v[:, None]  # (n, 2): each row divided by its own value
    target = np.ones_like(v)
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
    """What the page says of one kernel's memory."""

    kernel: str
    memory_slope_long: float  # of the bytes kept, over the LONG_LENGTHS longest
    memory_fit: LinearQuadratic  # bytes kept
    longest: int
    saved_longest: int

    @property
    def bytes_per_square(self) -> float:
        """The quadratic part of the bytes kept, per T² (the explicit kernel: 4 × batch × heads)."""
        return self.memory_fit.quadratic


def kernel_findings(cost: AttentionCost, kernel: KernelCost) -> KernelFindings:
    long = slice(-LONG_LENGTHS, None)
    return KernelFindings(kernel=kernel.kernel,
                          memory_slope_long=loglog_slope(cost.lengths[long], kernel.saved_bytes[long]),
                          memory_fit=linear_and_quadratic(cost.lengths, kernel.saved_bytes),
                          longest=cost.lengths[-1], saved_longest=kernel.saved_bytes[-1])


@dataclass(frozen=True)
class WorkFindings:
    """What the page says of the operations a pass does."""

    slope: float  # over every length
    slope_long: float  # over the LONG_LENGTHS longest
    per_square: float  # the scores' products' operations per T² (12 · batch · d_model)
    square_share_longest: float
    gflops_longest: float


def work_findings(cost: AttentionCost) -> WorkFindings:
    long = slice(-LONG_LENGTHS, None)
    T = cost.lengths[-1]
    return WorkFindings(slope=loglog_slope(cost.lengths, cost.flops),
                        slope_long=loglog_slope(cost.lengths[long], cost.flops[long]),
                        per_square=cost.square_flops[-1] / T**2,
                        square_share_longest=cost.square_flops[-1] / cost.flops[-1],
                        gflops_longest=cost.flops[-1] / 1e9)


def doubling(cost: AttentionCost, length: int) -> tuple[float, float] | None:
    """What doubling the context from ``length`` (block_size) multiplies the course's steps' operations and memory
    by, where both lengths were measured; None otherwise."""
    if length not in cost.lengths or 2 * length not in cost.lengths:
        return None
    i, j = cost.lengths.index(length), cost.lengths.index(2 * length)
    saved = cost.kernel("explicit").saved_bytes
    return cost.flops[j] / cost.flops[i], saved[j] / saved[i]


def cost_metrics(cost: AttentionCost) -> dict:
    """The stage's summary in git (metrics/lab/cost.json), the numbers the lab page states: the same on every
    machine, like the file they come from."""
    work = work_findings(cost)
    metrics = {"lengths": list(cost.lengths), "work": {
        "flops_exponent": round(work.slope, 4), "flops_exponent_long": round(work.slope_long, 4),
        "square_flops_per_t2": round(work.per_square, 4), "square_share_longest": round(work.square_share_longest, 4),
        "gflops_longest": round(work.gflops_longest, 4)}}
    for kernel in cost.kernels:
        f = kernel_findings(cost, kernel)
        metrics[kernel.kernel] = {
            "memory_exponent_long": round(f.memory_slope_long, 4),
            "memory_bytes_per_square": round(f.bytes_per_square, 4),
            "quadratic_memory_share_longest": round(f.memory_fit.share_quadratic(f.longest), 4),
            "saved_mib_longest": round(f.saved_longest / 2**20, 4),
        }
    return metrics


def time_metrics(cost: AttentionCost, times: CostTimes) -> dict:
    """What the stage prints of its run log: each kernel's time exponent over the longest lengths and over all,
    the quadratic part's share of its fitted time at the longest length, and its time there."""
    long = slice(-LONG_LENGTHS, None)
    out = {}
    for kernel, seconds in times.seconds.items():
        fit = linear_and_quadratic(times.lengths, seconds)
        out[kernel] = {"time_exponent_long": loglog_slope(times.lengths[long], seconds[long]),
                       "time_exponent": loglog_slope(times.lengths, seconds),
                       "quadratic_share_longest": fit.share_quadratic(times.lengths[-1]),
                       "ms_longest": seconds[-1] * 1e3}
    return out
