"""train.cuda_graph: the training step recorded once as one CUDA graph and replayed, so that a step costs one
launch instead of a few hundred small kernels (Muon's Newton-Schulz among them).

What the graph holds: `Trainer.optimize` on two static batch tensors (forward, backward, clipping, both
optimizers' steps, the weights' average). What runs outside it, every step: the batch drawn on the device into
those tensors, and the learning rates written into their tensors (mha.training.trainer.Trainer.set_lr). A graph replays
kernels with the values they were recorded with, so every value that changes from step to step lives in a
device tensor: AdamW's learning rate (capturable, fused), Muon's (mha.training.optimizers.TensorLrMuon), the
average's count (mha.training.average.WeightAverage). The recording follows PyTorch's "whole network capture"
(CUDA semantics, CUDA Graphs): a few eager steps on a side stream first (lazy optimizer state, cuBLAS
workspaces, compilation when train.compile is on), then the capture. Those first steps are real training
steps, on real batches.

On a CPU the setting is refused (mha.train.check_device). `CapturedStep` records any `Step` (the trainer is one),
so this module imports nothing of the trainer's.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

from mha.schema import TrainConfig

EAGER_STEPS = 3  # steps run before the capture, as PyTorch's docs do: every lazy allocation made before recording


class Step(Protocol):
    """What a CUDA graph records and replays of a trainer (mha.training.trainer.Trainer is one)."""

    cfg: TrainConfig
    block_size: int
    device: torch.device
    optimizer: Any  # mha.training.optimizers.Optimizers: zero_grad() before the recording

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]: ...

    def optimize(self, x: torch.Tensor, y: torch.Tensor, autocast_cache: bool = True) -> None: ...


class CapturedStep:
    """A trainer's step as a CUDA graph: called once per step, after Trainer.set_lr, it draws the batch into the
    static tensors and replays the graph (recording it after EAGER_STEPS eager steps). Trainer.loss is the graph's
    loss tensor, overwritten by every replay."""

    def __init__(self, trainer: Step):
        if trainer.device.type != "cuda":
            raise ValueError(f"a CUDA graph needs a CUDA device, and this trainer is on {trainer.device.type}")
        self.trainer = trainer
        shape = (trainer.cfg.batch_size, trainer.block_size)
        self.x = torch.zeros(shape, dtype=torch.long, device=trainer.device)  # (B, T), the graph's input
        self.y = torch.zeros(shape, dtype=torch.long, device=trainer.device)  # (B, T), its targets
        self.graph: torch.cuda.CUDAGraph | None = None
        self.eager_steps = 0

    def __call__(self) -> None:
        x, y = self.trainer.next_batch()  # (B, T), (B, T), drawn on the device
        self.x.copy_(x)
        self.y.copy_(y)
        if self.graph is None and self.eager_steps < EAGER_STEPS:
            self._eager_step()
        else:
            if self.graph is None:
                self._record()
            self.graph.replay()

    def _eager_step(self) -> None:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.trainer.optimize(self.x, self.y, autocast_cache=False)
        torch.cuda.current_stream().wait_stream(side)
        self.eager_steps += 1

    def _record(self) -> None:
        """Record optimize() on the static batch; the kernels run only at replay, so the step this call serves
        is the first replay's."""
        self.trainer.optimizer.zero_grad(set_to_none=True)  # the gradients are allocated in the graph's pool
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.trainer.optimize(self.x, self.y, autocast_cache=False)
