"""Measure what one attention layer costs at growing lengths (the records and fits are mha.lab.cost's; why the
times go apart, there).

The layer is the model's own (mha.model.CausalSelfAttention at params.yaml's n_embd, n_head and scale), built
once for the longest length and run with each kernel on the same weights and inputs. No training: one forward
and backward pass per measurement, the loss the sum of the output (every output gets a gradient).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import torch
from torch.utils.flop_counter import FlopCounterMode

from mha.lab.cost import AttentionCost, CostTimes, KernelCost
from mha.machine import cpu_model
from mha.model import KERNELS, CausalSelfAttention
from mha.schema import GPTConfig

WARMUP_PASSES = 2  # untimed passes per length and kernel first: the allocator and the thread pool settle


def saved_for_backward(layer: CausalSelfAttention, x: torch.Tensor) -> int:
    """The bytes that one forward pass keeps for its backward: every tensor autograd saves, each storage once, the
    layer's weights left out (they are kept whatever T is)."""
    weights = {p.untyped_storage().data_ptr() for p in layer.parameters()}
    storages: dict[int, int] = {}  # storage address -> bytes

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:
            storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        y = layer(x)  # (B, T, C)
    y.sum().backward()
    layer.zero_grad(set_to_none=True)
    x.grad = None
    return sum(storages.values())


def timed_pass(layer: CausalSelfAttention, x: torch.Tensor, wait: Callable[[], None]) -> float:
    """Seconds of one forward and backward pass, the device done with it."""
    wait()
    start = time.perf_counter()
    layer(x).sum().backward()  # (B, T, C) -> a scalar whose gradient reaches every output
    wait()
    seconds = time.perf_counter() - start
    layer.zero_grad(set_to_none=True)
    x.grad = None
    return seconds


def counted_flops(layer: CausalSelfAttention, x: torch.Tensor) -> tuple[int, int]:
    """(projections, scores' products): the floating-point operations of one forward and backward pass of the
    course's steps, as PyTorch's counter counts them (mm: X W and Y W_O; baddbmm, bmm: Q Kᵀ and A V)."""
    kernel, layer.kernel = layer.kernel, "explicit"  # the fused operator has no formula in the counter
    with FlopCounterMode(display=False) as counter:
        layer(x).sum().backward()
    layer.kernel = kernel
    layer.zero_grad(set_to_none=True)
    x.grad = None
    counts = {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}
    square = counts.get("aten.baddbmm", 0) + counts.get("aten.bmm", 0)
    return counter.get_total_flops() - square, square


def attention_cost(model: GPTConfig, *, lengths: Sequence[int], batch: int, repeats: int, seed: int,
                   device: torch.device, progress: Callable[[str], None] = lambda line: None
                   ) -> tuple[AttentionCost, CostTimes]:
    """Every kernel at every length of ``lengths`` (increasing): what it keeps and the operations it does (the
    same on every machine), and its time, the median of ``repeats`` timed passes (this machine's)."""
    torch.manual_seed(seed)
    config = GPTConfig(**{**model.to_dict(), "block_size": max(lengths), "dropout": 0.0})
    layer = CausalSelfAttention(config).to(device).eval()  # eval: no dropout; autograd works the same
    inputs = {T: torch.randn(batch, T, config.n_embd, device=device, requires_grad=True) for T in lengths}
    wait = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    flops = [counted_flops(layer, inputs[T]) for T in lengths]
    kernels, seconds = [], {}
    for kernel in KERNELS:
        layer.kernel = kernel
        times, saved = [], []
        for T in lengths:
            x = inputs[T]  # (B, T, C)
            for _ in range(WARMUP_PASSES):
                timed_pass(layer, x, wait)
            times.append(statistics.median(timed_pass(layer, x, wait) for _ in range(repeats)))
            saved.append(saved_for_backward(layer, x))
            progress(f"{kernel} T={T}: {times[-1] * 1e3:.1f} ms, {saved[-1] / 2**20:.2f} MiB kept for backward")
        kernels.append(KernelCost(kernel=kernel, saved_bytes=tuple(saved)))
        seconds[kernel] = tuple(times)
    cost = AttentionCost(lengths=tuple(lengths), batch=batch, n_embd=config.n_embd, n_head=config.n_head,
                         linear_flops=tuple(f[0] for f in flops), square_flops=tuple(f[1] for f in flops),
                         kernels=tuple(kernels))
    times = CostTimes(lengths=tuple(lengths), repeats=repeats, device=device.type, threads=torch.get_num_threads(),
                      cpu=cpu_model(), seconds=seconds)
    return cost, times
