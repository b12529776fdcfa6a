"""train.cuda_graph: the training step recorded once as one CUDA graph and replayed, so that a step costs one
launch instead of a few hundred small kernels (Muon's Newton-Schulz among them).

What the graph holds: `Trainer.optimize` on two static batch tensors (forward, backward, clipping, both
optimizers' steps, the weights' average). What runs outside it, every step: the batch drawn on the device into
those tensors, and the learning rates written into their tensors (mha.loop.Trainer.set_lr). A graph replays
kernels with the values they were recorded with, so every value that changes from step to step lives in a
device tensor: AdamW's learning rate (capturable, fused), Muon's (`TensorLrMuon`), the average's count
(mha.loop.WeightAverage). The recording follows PyTorch's "whole network capture" (CUDA semantics, CUDA
Graphs): a few eager steps on a side stream first (lazy optimizer state, cuBLAS workspaces, compilation when
train.compile is on), then the capture. Those first steps are real training steps, on real batches.

On a CPU the setting is refused (mha.train.check_device). `TensorLrMuon`, the one piece that is not PyTorch's,
runs anywhere and is tested on a CPU against torch.optim.Muon.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch.optim._muon import _adjust_lr, _zeropower_via_newtonschulz  # torch.optim.Muon's own update

if TYPE_CHECKING:
    from mha.loop import Trainer

EAGER_STEPS = 3  # steps run before the capture, as PyTorch's docs do: every lazy allocation made before recording


class TensorLrMuon(torch.optim.Muon):
    """torch.optim.Muon whose learning rate is a () tensor on the parameters' device, read only by kernels.

    torch.optim.Muon adds the update with ``alpha=-lr * ratio``, a number: a tensor learning rate would be read
    back to the host there (a wait, and an error inside a CUDA graph). This is the same update (momentum,
    Nesterov, Newton-Schulz, decoupled weight decay, adjust_lr_fn's ratio) with the product computed on the
    device; it agrees with torch.optim.Muon to float32 rounding (tests/mha/test_cuda_graph.py)."""

    @torch.no_grad()
    def step(self, closure=None) -> None:
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]  # lr: (), on the device
            for param in group["params"]:
                if param.grad is None:
                    continue
                grad = param.grad
                state = self.state[param]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(grad, memory_format=torch.preserve_format)
                buf = state["momentum_buffer"]
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
                ratio = _adjust_lr(1.0, group["adjust_lr_fn"], param.shape)  # adjusted lr = lr × ratio
                param.mul_(1 - lr * group["weight_decay"])
                param.addcmul_(update, lr * -ratio)  # param - lr × ratio × update, in float32


class CapturedStep:
    """A trainer's step as a CUDA graph: called once per step, after Trainer.set_lr, it draws the batch into the
    static tensors and replays the graph (recording it after EAGER_STEPS eager steps). Trainer.loss is the graph's
    loss tensor, overwritten by every replay."""

    def __init__(self, trainer: Trainer):
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
