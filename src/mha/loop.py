"""The training loop: optimizer steps with a scheduled learning rate, and one callback.

`optimizer(model, cfg)` builds the recipe `train.optimizer` names (OPTIMIZERS): AdamW on every parameter, or
Muon (torch.optim.Muon: the momentum orthogonalised by Newton-Schulz) on the hidden weight matrices the model
names (`model.hidden_matrices()`) and AdamW on the rest (embeddings, LM head, LayerNorms, biases), which Muon
is not made for. Every parameter group keeps its peak learning rate in ``peak_lr``; the schedule `lr_scale`
multiplies it, so both optimizers warm up and decay together.

With `train.ema` above 0 the trainer also keeps an exponential moving average of the weights
(`WeightAverage`: PyTorch's AveragedModel, updated without reading its count on the host), and
`Trainer.evaluated` is that average: the model the caller evaluates, samples from and keeps. Averaging the last
few hundred steps' weights removes much of the noise that a high learning rate leaves in them, so the averaged
model reaches a validation loss long before the trained one does (benchmarks/README.md: time_to_loss).

Nothing in a step waits for the device: the batch is drawn where the model is, from a generator seeded with
train.seed; the learning rate is computed on the host from the step number; clipping, the optimizers and the
average read no value back; the loss stays a device tensor until someone reads it (mha.train: at evaluations).
With `train.cuda_graph` the step's work is recorded once as a CUDA graph and replayed (mha.cuda_graph).

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
    """``batch_size`` windows of ``data`` at random places, drawn on ``data``'s device by ``generator`` (also there)."""
    windows = data.unfold(0, block_size + 1, 1)  # (N - block_size, block_size + 1), a view
    ix = torch.randint(windows.size(0), (batch_size,), generator=generator, device=data.device)  # (B,)
    chunk = windows[ix]  # (B, T + 1)
    return chunk[:, :-1], chunk[:, 1:]  # (B, T), (B, T): each target is the next character


def adamw(parameters: list[torch.nn.Parameter], cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (not on biases or LayerNorm). Under train.cuda_graph each group's
    learning rate is a tensor on the parameters' device and the optimizer is capturable, as a graph needs."""
    decay = [p for p in parameters if p.dim() >= 2]
    no_decay = [p for p in parameters if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay, "peak_lr": cfg.lr},
              {"params": no_decay, "weight_decay": 0.0, "peak_lr": cfg.lr}]
    if cfg.cuda_graph:
        for group in groups:
            group["lr"] = torch.tensor(cfg.lr, device=parameters[0].device)  # (), written before every replay
    # fused: one kernel for every parameter, ~5-10% faster per step on CPU
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=ADAMW_BETAS, fused=True, capturable=cfg.cuda_graph)


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
        for group in self.param_groups:  # a tensor learning rate (train.cuda_graph) comes back where it was saved
            if isinstance(group["lr"], torch.Tensor):
                group["lr"] = group["lr"].to(group["params"][0].device)


def optimizer(model: torch.nn.Module, cfg: TrainConfig) -> Optimizers:
    """The recipe train.optimizer names: "adamw" on everything, or "muon" on the model's hidden matrices."""
    if cfg.optimizer == "adamw":
        return Optimizers(adamw=adamw(list(model.parameters()), cfg))
    hidden = list(model.hidden_matrices())
    taken = {id(p) for p in hidden}
    rest = [p for p in model.parameters() if id(p) not in taken]
    # adjust_lr_fn "original": the update scaled by √max(1, rows/cols), Keller Jordan's; muon_lr is tuned for it
    muon_class, lr = torch.optim.Muon, cfg.muon_lr
    if cfg.cuda_graph:
        from mha.cuda_graph import TensorLrMuon

        muon_class, lr = TensorLrMuon, torch.tensor(cfg.muon_lr, device=hidden[0].device)
    muon = muon_class([{"params": hidden, "peak_lr": cfg.muon_lr, "lr": lr}], lr=cfg.muon_lr,
                      weight_decay=cfg.weight_decay, momentum=MUON_MOMENTUM, nesterov=True, adjust_lr_fn="original")
    return Optimizers(muon=muon, adamw=adamw(rest, cfg))


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


@dataclass
class Trainer:
    model: torch.nn.Module  # returns (logits, loss) for (x, y)
    forward: Callable  # the model, or torch.compile(model): it shares the model's parameters
    optimizer: Optimizers
    cfg: TrainConfig
    data: torch.Tensor  # (N,) int64 ids of the training text, on the device
    block_size: int
    device: torch.device
    batches: torch.Generator  # draws every training batch, on the device
    step: int = 0  # optimizer steps taken
    loss: torch.Tensor | None = None  # the last step's training loss, () on the device: reading it waits for the step
    average: WeightAverage | None = None  # weight_average(model, cfg.ema), updated after every step
    captured: Callable[[], None] | None = None  # train.cuda_graph: mha.cuda_graph.CapturedStep, the step replayed

    @classmethod
    def for_run(cls, model: torch.nn.Module, cfg: TrainConfig, data: torch.Tensor, device: torch.device,
                forward: Callable | None = None) -> Trainer:
        """A run's trainer: the recipe's optimizers and weight average, and batches drawn on ``device`` from a
        generator seeded with train.seed (mha.train and benchmarks/time_to_loss.py train the same way)."""
        # `forward or model` would ask a compiled module for bool(), which it refuses
        trainer = cls(model=model, forward=model if forward is None else forward, optimizer=optimizer(model, cfg),
                      cfg=cfg, data=data.to(device), block_size=model.config.block_size, device=device,
                      batches=torch.Generator(device=device).manual_seed(cfg.seed),
                      average=weight_average(model, cfg.ema))
        if cfg.cuda_graph:
            from mha.cuda_graph import CapturedStep

            trainer.captured = CapturedStep(trainer)
        return trainer

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
        self.set_lr(lr_scale(self.step, self.cfg))
        if self.captured is not None:
            self.captured()
        else:
            self.optimize(*self.next_batch())
        self.step += 1

    def set_lr(self, scale: float) -> None:
        """Every group's learning rate: its peak times ``scale``, computed on the host (a tensor learning rate,
        train.cuda_graph's, is written in place on the device)."""
        for group in self.optimizer.param_groups:
            if isinstance(group["lr"], torch.Tensor):
                group["lr"].fill_(group["peak_lr"] * scale)
            else:
                group["lr"] = group["peak_lr"] * scale

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        return get_batch(self.data, self.cfg.batch_size, self.block_size, self.batches)  # (B, T), (B, T)

    def optimize(self, x: torch.Tensor, y: torch.Tensor, autocast_cache: bool = True) -> None:
        """Forward, backward, clipping, the optimizers' step and the average's update on the batch (x, y): the
        part of the step a CUDA graph records (which needs ``autocast_cache`` off). Nothing here reads a value
        back to the host."""
        cfg = self.cfg
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=cfg.precision == "bf16",
                            cache_enabled=autocast_cache):
            _, self.loss = self.forward(x, y)
        self.optimizer.zero_grad(set_to_none=True)
        self.loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        if self.average is not None:
            self.average.update_parameters(self.model)
