"""Question 2's cases with weights: the worked example (its numbers may be shown) and the hidden seeded ones, each an
input and the course's matrices, judged against ``mha.reference`` (``checks``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.messages import Message
from grader.module.layouts import CourseWeights
from mha import worked_example


@dataclass(frozen=True)
class WeightedCase:
    x: np.ndarray  # (B, T, d_model)
    weights: CourseWeights
    label: Message
    published: bool = False  # the worked example: its numbers may be shown


def worked_case() -> WeightedCase:
    ex = worked_example.load()
    W = CourseWeights(list(ex.W_Q), list(ex.W_K), list(ex.W_V), ex.W_O)
    return WeightedCase(ex.X[None], W, Message("case.worked", {}), published=True)


def hidden_cases(seed: int) -> list[WeightedCase]:
    """Seeded: random weights (scaled so scores stay of order one) for several (d_model, h), B 1-2, T 3-12."""
    rng = np.random.default_rng([seed, 23])
    cases = []
    for d_model, h in ((8, 2), (12, 3), (16, 4), (6, 2)):
        d_k = d_model // h
        B, T = int(rng.integers(1, 3)), int(rng.integers(3, 13))
        # entries of size d_model^-1/4 keep the scores of order one, where the softmax is neither flat nor saturated
        mats = [[rng.standard_normal((d_model, d_k)) * d_model ** -0.25 for _ in range(h)] for _ in range(3)]
        W = CourseWeights(*mats, rng.standard_normal((d_model, d_model)) / np.sqrt(d_model))
        label = Message("case.sizes", {"params": f"B={B}, T={T}, d_model={d_model}, h={h}"})
        cases.append(WeightedCase(rng.standard_normal((B, T, d_model)), W, label))
    return cases
