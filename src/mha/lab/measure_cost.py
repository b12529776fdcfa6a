"""Measure what one attention layer costs at growing lengths (the records and fits are mha.lab.cost's).

The layer is the model's own (mha.model.CausalSelfAttention at params.yaml's n_embd, n_head and scale), built
once for the longest length and run with each kernel on the same weights and inputs. No training: one forward
and backward pass per measurement, the loss the sum of the output (every output gets a gradient).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import torch

from mha.lab.cost import AttentionCost, KernelCost
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


def peak_bytes(layer: CausalSelfAttention, x: torch.Tensor) -> int:
    """The CUDA allocator's peak during one pass, above what was allocated before it."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    layer(x).sum().backward()
    torch.cuda.synchronize()
    layer.zero_grad(set_to_none=True)
    x.grad = None
    return torch.cuda.max_memory_allocated() - before


def attention_cost(model: GPTConfig, *, lengths: Sequence[int], batch: int, repeats: int, seed: int,
                   device: torch.device, progress: Callable[[str], None] = lambda line: None) -> AttentionCost:
    """Every kernel at every length of ``lengths`` (increasing), ``repeats`` timed passes each (their median)."""
    torch.manual_seed(seed)
    config = GPTConfig(**{**model.to_dict(), "block_size": max(lengths), "dropout": 0.0})
    layer = CausalSelfAttention(config).to(device).eval()  # eval: no dropout; autograd works the same
    inputs = {T: torch.randn(batch, T, config.n_embd, device=device, requires_grad=True) for T in lengths}
    wait = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    kernels = []
    for kernel in KERNELS:
        layer.kernel = kernel
        seconds, saved, peaks = [], [], []
        for T in lengths:
            x = inputs[T]  # (B, T, C)
            for _ in range(WARMUP_PASSES):
                timed_pass(layer, x, wait)
            seconds.append(statistics.median(timed_pass(layer, x, wait) for _ in range(repeats)))
            saved.append(saved_for_backward(layer, x))
            if device.type == "cuda":
                peaks.append(peak_bytes(layer, x))
            progress(f"{kernel} T={T}: {seconds[-1] * 1e3:.1f} ms, {saved[-1] / 2**20:.2f} MiB kept for backward")
        kernels.append(KernelCost(kernel=kernel, seconds=tuple(seconds), saved_bytes=tuple(saved),
                                  peak_bytes=tuple(peaks) if device.type == "cuda" else None))
    return AttentionCost(lengths=tuple(lengths), batch=batch, n_embd=config.n_embd, n_head=config.n_head,
                         repeats=repeats, seed=seed, device=device.type, threads=torch.get_num_threads(),
                         kernels=tuple(kernels))
