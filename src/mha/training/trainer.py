"""The trainer: optimizer steps with a scheduled learning rate, and one callback.

`Trainer.for_run(model, cfg, data, device)` builds a run's trainer: the optimizers train.optimizer names
(mha.training.optimizers), the learning-rate schedule (mha.training.schedule) and, with train.ema above 0, the
weights' moving average (mha.training.average), whose weights `Trainer.evaluated` is.

Nothing in a step waits for the device: the batch is drawn where the model is, from a generator seeded with
train.seed; the learning rate is computed on the host from the step number; clipping, the optimizers and the
average read no value back; the loss stays a device tensor until someone reads it (mha.train: at evaluations).
With `train.cuda_graph` the step's work is recorded once as a CUDA graph and replayed (mha.training.cuda_graph).

The caller owns evaluation, progress and checkpoints: `Trainer.run(after_step)` calls ``after_step(trainer)``
after every optimizer step, and the callback reads `trainer.step` and `trainer.loss` (minGPT's trainer
with its `on_batch_end` callback is the model). What a checkpoint keeps of the trainer, and puts back, is
`state_dict()` and `load_state_dict()` (mha.checkpoint).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from mha.schema import TrainConfig
from mha.training.average import WeightAverage, weight_average
from mha.training.cuda_graph import CapturedStep
from mha.training.optimizers import Optimizers, build_optimizers
from mha.training.schedule import lr_scale


def get_batch(
    data: torch.Tensor, batch_size: int, block_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_size`` windows of ``data`` at random places, drawn on ``data``'s device by ``generator`` (also there)."""
    windows = data.unfold(0, block_size + 1, 1)  # (N - block_size, block_size + 1), a view
    ix = torch.randint(windows.size(0), (batch_size,), generator=generator, device=data.device)  # (B,)
    chunk = windows[ix]  # (B, T + 1)
    return chunk[:, :-1], chunk[:, 1:]  # (B, T), (B, T): each target is the next character


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
    captured: Callable[[], None] | None = None  # train.cuda_graph: the step replayed (cuda_graph.CapturedStep)

    @classmethod
    def for_run(cls, model: torch.nn.Module, cfg: TrainConfig, data: torch.Tensor, device: torch.device,
                forward: Callable | None = None) -> Trainer:
        """A run's trainer: the recipe's optimizers and weight average, and batches drawn on ``device`` from a
        generator seeded with train.seed (mha.train and benchmarks/time_to_loss.py train the same way)."""
        # `forward or model` would ask a compiled module for bool(), which it refuses
        trainer = cls(model=model, forward=model if forward is None else forward,
                      optimizer=build_optimizers(model, cfg), cfg=cfg, data=data.to(device),
                      block_size=model.config.block_size, device=device,
                      batches=torch.Generator(device=device).manual_seed(cfg.seed),
                      average=weight_average(model, cfg.ema))
        if cfg.cuda_graph:
            trainer.captured = CapturedStep(trainer)
        return trainer

    @property
    def tokens_per_step(self) -> int:
        return self.cfg.batch_size * self.block_size

    @property
    def evaluated(self) -> torch.nn.Module:
        """The model to evaluate, sample from and keep: the weights' average, or the model when there is none."""
        return self.model if self.average is None else self.average.module

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of the training (mha.checkpoint.Checkpoint's fields of the same names): the
        weights and their average on the CPU, the optimizers' state, the step, and the random generators' states
        ("batches": the batch generator's, "torch" and "cuda": the global ones', cuda None off a GPU)."""
        return {"model": on_cpu(self.model.state_dict()), "optimizer": self.optimizer.state_dict(), "step": self.step,
                "rng": {"batches": self.batches.get_state(), "torch": torch.get_rng_state(),
                        "cuda": torch.cuda.get_rng_state() if self.device.type == "cuda" else None},
                "average": None if self.average is None else on_cpu(self.average.state_dict())}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the training ``state`` (from `state_dict`) describes, with the next step."""
        self.model.load_state_dict(state["model"])
        if self.average is not None:  # a checkpoint's fingerprint (train.ema) says it has one
            self.average.load_state_dict(state["average"])
        self.optimizer.load_state_dict(state["optimizer"])
        rng = state["rng"]
        self.batches.set_state(rng["batches"])
        torch.set_rng_state(rng["torch"])
        if self.device.type == "cuda" and rng.get("cuda") is not None:
            torch.cuda.set_rng_state(rng["cuda"])
        self.step = state["step"]

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


def on_cpu(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.cpu() for k, v in state.items()}
