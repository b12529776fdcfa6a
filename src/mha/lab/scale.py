"""Statistics of the 1/√d_k scale, measured on random vectors: no model, no training.

The course's claim: for q and k with independent components of mean 0 and variance 1, Var(q·k) = d_k,
so unscaled scores spread out as d_k grows, the softmax saturates towards one key, and its gradient
vanishes; dividing by √d_k keeps the variance at 1 and the softmax in its working range.

For each d_k, `scale_statistics` draws `samples` rows, each one query q against `row_length` keys
k_1 … k_n (all components standard normal, float64), and measures
- the variance of the scores q·k_j (about their known mean 0), against the line d_k, and the same
  for the scaled scores q·k_j / √d_k, against 1;
- for the softmax p of each row, unscaled and scaled, the mean over rows of the largest weight max_j p_j,
  the entropy −Σ p_j ln p_j (nats), and the spectral norm of the softmax's Jacobian
  J = ∂p/∂s = diag(p) − p pᵀ, the largest factor by which the softmax can pass a gradient back.
  J is symmetric positive semi-definite, so its spectral norm is its largest eigenvalue: 1/n for the
  uniform row, 0 for a one-hot row, never more than 1/2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from mha.reference import softmax

# Rows drawn at once: bounds memory (ROWS_PER_DRAW × row_length × d_k float64 keys) whatever `samples` is.
# Part of the random stream's layout, so changing it changes the numbers drawn for a seed.
ROWS_PER_DRAW = 256

# Halvings of [p_(2), p_(1)] (at most 1 wide) for the Jacobian's norm: 64 leave it 2⁻⁶⁴ ≈ 5e-20 wide.
BISECTION_STEPS = 64


@dataclass(frozen=True)
class SoftmaxRowStatistics:
    """Means over the sampled rows, one value per d_k."""

    largest_weight: tuple[float, ...]  # 1/row_length for a uniform row, 1 for a one-hot row
    entropy: tuple[float, ...]  # nats: ln(row_length) for a uniform row, 0 for a one-hot row
    jacobian_spectral_norm: tuple[float, ...]  # ‖diag(p) − p pᵀ‖₂: 1/row_length uniform, 0 one-hot


@dataclass(frozen=True)
class ScaleStatistics:
    d_k: tuple[int, ...]
    samples: int  # rows per d_k
    row_length: int  # keys per row
    seed: int
    score_variance: tuple[float, ...]  # mean of (q·k)² over samples × row_length scores; the course: d_k
    score_variance_standard_error: tuple[float, ...]  # of that estimate, from the normal's moments
    scaled_score_variance: tuple[float, ...]  # the same for q·k / √d_k; the course: 1
    unscaled: SoftmaxRowStatistics  # rows softmax(q·k_1, …, q·k_n)
    scaled: SoftmaxRowStatistics  # rows softmax(q·k_1 / √d_k, …, q·k_n / √d_k)

    def to_dict(self) -> dict:
        return asdict(self)


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """∂p/∂s of p = softmax(s) for rows p (..., n): diag(p) − p pᵀ, (..., n, n)."""
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]  # (..., n, n)


def jacobian_spectral_norm(p: np.ndarray) -> np.ndarray:
    """‖diag(p) − p pᵀ‖₂ for rows p (..., n) of n ≥ 2: the matrix's largest eigenvalue (it is symmetric PSD).

    Found without forming the matrix, in O(n) per step rather than an eigensolver's O(n³). An eigenvalue
    λ of the rank-one update diag(p) − p pᵀ that is not some p_i solves 1 = Σ_i p_i² / (p_i − λ); as
    Σ_i p_i = 1, that is λ · g(λ) = 0 with g(λ) = Σ_i p_i / (p_i − λ). The largest eigenvalue lies between
    the two largest weights, p_(2) ≤ λ ≤ p_(1) (interlacing), where g increases from −∞ to +∞: bisection
    there. With p_(1) = p_(2) the answer is p_(1); a one-hot row gives 0. Accurate to about 1e-16 absolute,
    as an eigensolver is (the weights themselves are known to no better near 1).
    """
    top_two = np.sort(p, axis=-1)[..., -2:]  # (..., 2): p_(2), p_(1)
    low, high = top_two[..., 0], top_two[..., 1]  # (...,) each
    # a midpoint may land on a p_i once the interval is one float wide; g is then ±inf, and either side is right
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(BISECTION_STEPS):
            middle = (low + high) / 2  # (...,)
            g = (p / (p - middle[..., None])).sum(axis=-1)  # (...,)
            root_above = g < 0
            low, high = np.where(root_above, middle, low), np.where(root_above, high, middle)
    return (low + high) / 2  # (...,)


def entropy(p: np.ndarray) -> np.ndarray:
    """−Σ_j p_j ln p_j (nats) of rows p (..., n), with 0 ln 0 = 0 (saturated rows underflow to 0)."""
    log_p = np.log(p, out=np.zeros_like(p), where=p > 0)  # (..., n)
    return -(p * log_p).sum(axis=-1)  # (...,)


def score_variance_standard_error(d_k: int, samples: int, row_length: int) -> float:
    """Standard error of mean((q·k)²) over `samples` rows of `row_length` keys, each row with one q.

    With s = q·k for standard normal components: Var(s²) = E[s⁴] − d_k² = 2 d_k² + 6 d_k, and two scores
    of one row share q, so Cov(s_1², s_2²) = Var(|q|²) = 2 d_k.
    """
    n = row_length
    per_row = n * (2 * d_k**2 + 6 * d_k) + n * (n - 1) * 2 * d_k  # Var(Σ_j s_j²) for one row
    return math.sqrt(per_row / samples) / n


def _scores(d_k: int, samples: int, row_length: int, seed: int) -> np.ndarray:
    """The unscaled scores q·k_j of `samples` rows: (samples, row_length), float64.

    Each d_k draws from its own stream (seed, d_k), so its numbers do not depend on the other d_ks asked for.
    """
    rng = np.random.default_rng([seed, d_k])
    rows = []
    for start in range(0, samples, ROWS_PER_DRAW):
        count = min(ROWS_PER_DRAW, samples - start)
        q = rng.standard_normal((count, d_k, 1))  # (R, d_k, 1)
        k = rng.standard_normal((count, row_length, d_k))  # (R, n, d_k)
        rows.append((k @ q)[..., 0])  # (R, n)
    return np.concatenate(rows)  # (samples, n)


def _row_statistics(scores: Sequence[np.ndarray]) -> SoftmaxRowStatistics:
    """Mean largest weight, entropy and Jacobian norm of the softmax rows, one value per score matrix."""
    ps = [softmax(s) for s in scores]  # (samples, n) each
    return SoftmaxRowStatistics(
        largest_weight=tuple(float(p.max(axis=1).mean()) for p in ps),
        entropy=tuple(float(entropy(p).mean()) for p in ps),
        jacobian_spectral_norm=tuple(float(jacobian_spectral_norm(p).mean()) for p in ps),
    )


def scale_statistics(d_ks: Sequence[int], samples: int, row_length: int, seed: int) -> ScaleStatistics:
    """Measure the scale's statistics for each d_k in d_ks; deterministic for a seed."""
    for name, value, least in (("samples", samples, 2), ("row_length", row_length, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")
    if not d_ks or any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in d_ks):
        raise ValueError(f"d_ks must be a non-empty list of positive integers, got {d_ks!r}")
    unscaled = [_scores(d_k, samples, row_length, seed) for d_k in d_ks]  # (samples, n) each
    scaled = [s / math.sqrt(d_k) for s, d_k in zip(unscaled, d_ks, strict=True)]  # (samples, n) each
    return ScaleStatistics(
        d_k=tuple(d_ks),
        samples=samples,
        row_length=row_length,
        seed=seed,
        score_variance=tuple(float(np.mean(s**2)) for s in unscaled),
        score_variance_standard_error=tuple(score_variance_standard_error(d, samples, row_length) for d in d_ks),
        scaled_score_variance=tuple(float(np.mean(s**2)) for s in scaled),
        unscaled=_row_statistics(unscaled),
        scaled=_row_statistics(scaled),
    )
