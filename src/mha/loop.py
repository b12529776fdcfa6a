"""The training loop: optimizer steps with a scheduled learning rate, and one callback.

`optimizer(model, cfg)` builds the recipe `train.optimizer` names (OPTIMIZERS): AdamW on every parameter, or
Muon (torch.optim.Muon: the momentum orthogonalised by Newton-Schulz) on the hidden weight matrices the model
names (`model.hidden_matrices()`) and AdamW on the rest (embeddings, LM head, LayerNorms, biases), which Muon
is not made for. Every parameter group keeps its peak learning rate in ``peak_lr``; the schedule `lr_scale`
multiplies it, so both optimizers warm up and decay together.

With `train.ema` above 0 the trainer also keeps an exponential moving average of the weights
(`weight_average`: PyTorch's AveragedModel), and `Trainer.evaluated` is that average: the model the caller
evaluates, samples from and keeps. Averaging the last few hundred steps' weights removes much of the noise
that a high learning rate leaves in them, so the averaged model reaches a validation loss long before the
trained one does (benchmarks/README.md: time_to_loss).

The caller owns evaluation, progress and checkpoints: `Trainer.run(after_step)` calls ``after_step(trainer)``
after every optimizer step, and the callback reads `trainer.step` and `trainer.loss` (minGPT's trainer
with its `on_batch_end` callback is the model).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.optim.swa_utils import AveragedModel

from mha.config import TrainConfig

ADAMW_BETAS = (0.9, 0.99)  # beta2 below 0.999: few tokens per step (nanoGPT's Shakespeare-char recipe)
MUON_MOMENTUM = 0.95  # Nesterov momentum, as torch.optim.Muon and Keller Jordan's Muon use it
EMA_WARMUP = 10  # the average's decay after n updates is min(ema, (1 + n) / (EMA_WARMUP + n))


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


def get_batch(
    data: torch.Tensor, batch_size: int, block_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    windows = data.unfold(0, block_size + 1, 1)  # (N - block_size, block_size + 1), a view
    ix = torch.randint(windows.size(0), (batch_size,), generator=generator)  # (B,)
    chunk = windows[ix]  # (B, T + 1)
    return chunk[:, :-1], chunk[:, 1:]  # (B, T), (B, T): each target is the next character


def adamw(parameters: list[torch.nn.Parameter], cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (not on biases or LayerNorm)."""
    decay = [p for p in parameters if p.dim() >= 2]
    no_decay = [p for p in parameters if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay, "peak_lr": cfg.lr},
         {"params": no_decay, "weight_decay": 0.0, "peak_lr": cfg.lr}],
        # fused: one kernel for every parameter, ~5-10% faster per step on CPU
        lr=cfg.lr, betas=ADAMW_BETAS, fused=True,
    )


class Optimizers:
    """Several torch optimizers stepped as one, each over its own parameters (Muon's and AdamW's)."""

    def __init__(self, **optimizers: torch.optim.Optimizer):
        self.optimizers = optimizers

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return [group for optimizer in self.optimizers.values() for group in optimizer.param_groups]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for optimizer in self.optimizers.values():
            optimizer.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for optimizer in self.optimizers.values():
            optimizer.step()

    def state_dict(self) -> dict[str, dict]:
        return {name: optimizer.state_dict() for name, optimizer in self.optimizers.items()}

    def load_state_dict(self, state: dict[str, dict]) -> None:
        for name, optimizer in self.optimizers.items():
            optimizer.load_state_dict(state[name])


def optimizer(model: torch.nn.Module, cfg: TrainConfig) -> Optimizers:
    """The recipe train.optimizer names: "adamw" on everything, or "muon" on the model's hidden matrices."""
    if cfg.optimizer == "adamw":
        return Optimizers(adamw=adamw(list(model.parameters()), cfg))
    hidden = list(model.hidden_matrices())
    taken = {id(p) for p in hidden}
    rest = [p for p in model.parameters() if id(p) not in taken]
    # adjust_lr_fn "original": the update scaled by √max(1, rows/cols), Keller Jordan's; muon_lr is tuned for it
    muon = torch.optim.Muon([{"params": hidden, "peak_lr": cfg.muon_lr}], lr=cfg.muon_lr,
                            weight_decay=cfg.weight_decay, momentum=MUON_MOMENTUM, nesterov=True,
                            adjust_lr_fn="original")
    return Optimizers(muon=muon, adamw=adamw(rest, cfg))


def ema_decay(updates: int, decay: float) -> float:
    """The average's decay at its ``updates``-th update after the first: short at first, so that the weights of
    the first steps, far from any good model, leave the average within a few dozen steps (TensorFlow's
    ExponentialMovingAverage with num_updates does the same)."""
    return min(decay, (1 + updates) / (EMA_WARMUP + updates))


def weight_average(model: torch.nn.Module, decay: float) -> AveragedModel | None:
    """An exponential moving average of ``model``'s parameters (None when ``decay`` is 0). Its buffers are
    copied once, not averaged: the model's are constants (the causal mask, the sinusoidal table)."""
    if decay == 0:
        return None

    @torch.no_grad()
    def update(averaged: list[torch.Tensor], current: list[torch.Tensor], updates: torch.Tensor) -> None:
        torch._foreach_lerp_(averaged, current, 1.0 - ema_decay(int(updates), decay))

    return AveragedModel(model, multi_avg_fn=update, use_buffers=False)


@dataclass
class Trainer:
    model: torch.nn.Module  # returns (logits, loss) for (x, y)
    forward: Callable  # the model, or torch.compile(model): it shares the model's parameters
    optimizer: Optimizers
    cfg: TrainConfig
    data: torch.Tensor  # (N,) int64 ids of the training text
    block_size: int
    device: torch.device
    batches: torch.Generator  # draws every training batch
    step: int = 0  # optimizer steps taken
    loss: torch.Tensor | None = None  # the last step's training loss
    average: AveragedModel | None = None  # weight_average(model, cfg.ema), updated after every step

    @classmethod
    def for_run(cls, model: torch.nn.Module, cfg: TrainConfig, data: torch.Tensor, device: torch.device,
                forward: Callable | None = None) -> Trainer:
        """A run's trainer: the recipe's optimizers and weight average, and batches drawn from a generator seeded
        with train.seed (mha.train and benchmarks/time_to_loss.py train the same way)."""
        return cls(model=model, forward=forward or model, optimizer=optimizer(model, cfg), cfg=cfg, data=data,
                   block_size=model.config.block_size, device=device,
                   batches=torch.Generator().manual_seed(cfg.seed), average=weight_average(model, cfg.ema))

    @property
    def tokens_per_step(self) -> int:
        return self.cfg.batch_size * self.block_size

    @property
    def evaluated(self) -> torch.nn.Module:
        """The model to evaluate, sample from and keep: the weights' average, or the model when there is none."""
        return self.model if self.average is None else self.average.module

    def run(self, after_step: Callable[[Trainer], None]) -> None:
        """Step until cfg.max_iters, calling ``after_step(self)`` after each step."""
        self.model.train()
        while self.step < self.cfg.max_iters:
            self.train_step()
            after_step(self)

    def train_step(self) -> None:
        """One optimizer step on the next batch, at the schedule's learning rate (the model in training mode)."""
        cfg = self.cfg
        scale = lr_scale(self.step, cfg)
        for group in self.optimizer.param_groups:
            group["lr"] = group["peak_lr"] * scale
        x, y = get_batch(self.data, cfg.batch_size, self.block_size, self.batches)  # (B, T), (B, T)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=cfg.precision == "bf16"):
            _, self.loss = self.forward(x.to(self.device), y.to(self.device))
        self.optimizer.zero_grad(set_to_none=True)
        self.loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        if self.average is not None:
            self.average.update_parameters(self.model)
        self.step += 1
