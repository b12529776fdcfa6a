"""The learning-rate schedule: a linear warmup, then a cosine decay to train.min_lr.

Every parameter group keeps its peak learning rate in ``peak_lr`` (mha.training.optimizers); `lr_scale`
multiplies it, so AdamW and Muon warm up and decay together.
"""

from __future__ import annotations

import math

from mha.schema import TrainConfig


def lr_scale(step: int, cfg: TrainConfig) -> float:
    """The factor on every peak learning rate: a linear warmup from 0 to 1 over warmup_iters, then a cosine
    decay to min_lr / lr at max_iters."""
    floor = cfg.min_lr / cfg.lr
    if step < cfg.warmup_iters:
        return (step + 1) / cfg.warmup_iters
    progress = (step - cfg.warmup_iters) / max(1, cfg.max_iters - cfg.warmup_iters)
    return floor + 0.5 * (1.0 - floor) * (1.0 + math.cos(math.pi * min(1.0, progress)))


def lr_at(step: int, cfg: TrainConfig) -> float:
    """AdamW's learning rate at ``step``: lr warmed up, then decayed by cosine to min_lr (Muon's is muon_lr/lr × it)."""
    return cfg.lr * lr_scale(step, cfg)
