"""The exponential moving average of the weights that `train.ema` asks for (0: none).

With `train.ema` above 0 the trainer keeps an average of the weights (`WeightAverage`: PyTorch's AveragedModel,
updated without reading its count on the host), and `Trainer.evaluated` is that average: the model the caller
evaluates, samples from and keeps. Averaging the last few hundred steps' weights removes much of the noise that
a high learning rate leaves in them, so the averaged model reaches a validation loss long before the trained one
does (benchmarks/README.md: time_to_loss).
"""

from __future__ import annotations

import torch
from torch.optim.swa_utils import AveragedModel

EMA_WARMUP = 10  # the average's decay after n updates is min(ema, (1 + n) / (EMA_WARMUP + n))


def ema_decay(updates: int, decay: float) -> float:
    """The average's decay at its ``updates``-th update after the first: short at first, so that the weights of
    the first steps, far from any good model, leave the average within a few dozen steps (TensorFlow's
    ExponentialMovingAverage with num_updates does the same)."""
    return min(decay, (1 + updates) / (EMA_WARMUP + updates))


class WeightAverage(AveragedModel):
    """An exponential moving average of a model's parameters, with AveragedModel's state (``module.*`` and the
    update count ``n_averaged``, kept on the model's device). Its buffers are copied once, not averaged: the
    model's are constants (the causal mask, the sinusoidal table).

    AveragedModel's own update asks the host whether the count is 0 (a copy) and reads it back for the decay;
    this one computes the weight of the new parameters from the count on the device, so a step never waits for
    it and a CUDA graph can hold it. The weight is 1 at the first update (lerp with weight 1 is a copy) and then
    1 - ema_decay(count), computed in float64 as the host would and rounded once, as a Python float passed to
    lerp is: the same numbers as AveragedModel with ema_decay."""

    def __init__(self, model: torch.nn.Module, decay: float):
        super().__init__(model, device=next(model.parameters()).device, use_buffers=False)
        self.decay = decay

    @torch.no_grad()
    def update_parameters(self, model: torch.nn.Module) -> None:
        n = self.n_averaged.double()  # (), updates so far
        kept = torch.clamp((1 + n) / (EMA_WARMUP + n), max=self.decay)  # (), ema_decay(n, decay)
        weight = torch.where(n == 0, 1.0, 1.0 - kept).float()  # (), the new parameters' share
        for averaged, current in zip(self.module.parameters(), model.parameters(), strict=True):
            averaged.lerp_(current, weight)
        self.n_averaged += 1


def weight_average(model: torch.nn.Module, decay: float) -> WeightAverage | None:
    """The moving average of ``model``'s parameters with ``decay`` (train.ema), or None when it is 0."""
    return None if decay == 0 else WeightAverage(model, decay)
