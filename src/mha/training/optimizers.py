"""The optimizers `train.optimizer` names (OPTIMIZERS), stepped as one.

`build_optimizers(model, cfg)` builds the recipe: AdamW on every parameter, or Muon (torch.optim.Muon: the
momentum orthogonalised by Newton-Schulz) on the hidden weight matrices the model names
(`model.hidden_matrices()`) and AdamW on the rest (embeddings, LM head, LayerNorms, biases), which Muon is not
made for. Every parameter group keeps its peak learning rate in ``peak_lr`` for the schedule
(mha.training.schedule). Under `train.cuda_graph` each learning rate is a tensor on the device, which a graph
replays (AdamW capturable and fused, Muon as `TensorLrMuon`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.optim._muon import _adjust_lr, _zeropower_via_newtonschulz  # torch.optim.Muon's own update

from mha.schema import TrainConfig

ADAMW_BETAS = (0.9, 0.99)  # beta2 below 0.999: few tokens per step (nanoGPT's Shakespeare-char recipe)
MUON_MOMENTUM = 0.95  # Nesterov momentum, as torch.optim.Muon and Keller Jordan's Muon use it


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


def build_optimizers(model: torch.nn.Module, cfg: TrainConfig) -> Optimizers:
    """The recipe train.optimizer names: "adamw" on everything, or "muon" on the model's hidden matrices."""
    if cfg.optimizer == "adamw":
        return Optimizers(adamw=adamw(list(model.parameters()), cfg))
    hidden = list(model.hidden_matrices())
    taken = {id(p) for p in hidden}
    rest = [p for p in model.parameters() if id(p) not in taken]
    # adjust_lr_fn "original": the update scaled by √max(1, rows/cols), Keller Jordan's; muon_lr is tuned for it
    muon_class, lr = torch.optim.Muon, cfg.muon_lr
    if cfg.cuda_graph:
        muon_class, lr = TensorLrMuon, torch.tensor(cfg.muon_lr, device=hidden[0].device)
    muon = muon_class([{"params": hidden, "peak_lr": cfg.muon_lr, "lr": lr}], lr=cfg.muon_lr,
                      weight_decay=cfg.weight_decay, momentum=MUON_MOMENTUM, nesterov=True, adjust_lr_fn="original")
    return Optimizers(muon=muon, adamw=adamw(rest, cfg))


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
