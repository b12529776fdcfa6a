"""The training loop, model-agnostic: AdamW steps with a scheduled learning rate, and one callback.

The caller owns evaluation, progress and checkpoints: `Trainer.run(after_step)` calls ``after_step(trainer)``
after every optimizer step, and the callback reads `trainer.step` and `trainer.loss` (minGPT's trainer
with its `on_batch_end` callback is the model).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from mha.config import TrainConfig


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warmup from 0 to lr over warmup_iters, then cosine decay to min_lr at max_iters."""
    if step < cfg.warmup_iters:
        return cfg.lr * (step + 1) / cfg.warmup_iters
    progress = (step - cfg.warmup_iters) / max(1, cfg.max_iters - cfg.warmup_iters)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1.0 + math.cos(math.pi * min(1.0, progress)))


def get_batch(
    data: torch.Tensor, batch_size: int, block_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    windows = data.unfold(0, block_size + 1, 1)  # (N - block_size, block_size + 1), a view
    ix = torch.randint(windows.size(0), (batch_size,), generator=generator)  # (B,)
    chunk = windows[ix]  # (B, T + 1)
    return chunk[:, :-1], chunk[:, 1:]  # (B, T), (B, T): each target is the next character


def adamw(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (not on biases or LayerNorm)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        # fused: one kernel for every parameter, ~5-10% faster per step on CPU
        lr=cfg.lr, betas=(0.9, 0.99), fused=True,
    )


@dataclass
class Trainer:
    model: torch.nn.Module  # returns (logits, loss) for (x, y)
    forward: Callable  # the model, or torch.compile(model): it shares the model's parameters
    optimizer: torch.optim.Optimizer
    cfg: TrainConfig
    data: torch.Tensor  # (N,) int64 ids of the training text
    block_size: int
    device: torch.device
    batches: torch.Generator  # draws every training batch
    step: int = 0  # optimizer steps taken
    loss: torch.Tensor | None = None  # the last step's training loss

    def run(self, after_step: Callable[[Trainer], None]) -> None:
        """Step until cfg.max_iters, calling ``after_step(self)`` after each step."""
        cfg = self.cfg
        self.model.train()
        while self.step < cfg.max_iters:
            lr = lr_at(self.step, cfg)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            x, y = get_batch(self.data, cfg.batch_size, self.block_size, self.batches)  # (B, T), (B, T)
            with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=cfg.precision == "bf16"):
                _, self.loss = self.forward(x.to(self.device), y.to(self.device))
            self.optimizer.zero_grad(set_to_none=True)
            self.loss.backward()
            if cfg.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
            self.optimizer.step()
            self.step += 1
            after_step(self)
