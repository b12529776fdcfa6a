"""Training-step throughput of mha.model.GPT against PyTorch's built-in transformer layers.

Baseline: the same token/position embeddings, final LayerNorm and LM head around a stack of
`nn.TransformerEncoderLayer(norm_first=True, batch_first=True, activation="gelu")` with a causal
mask, at the same width, depth, heads and FFN size. Both are timed on one full training step
(forward, cross-entropy, backward, AdamW step, same optimizer settings), interleaved round by round
so that machine noise hits both alike. Prints tokens/s of each, the ratio, and whether it meets `GOAL`.

    .venv/bin/python benchmarks/train_throughput.py [--rounds 11 --steps 10]
    .venv/bin/python benchmarks/train_throughput.py --compile   # also times torch.compile(GPT) (train.compile)
    .venv/bin/python benchmarks/train_throughput.py --sdpa      # also times GPT with the sdpa kernel
    .venv/bin/python benchmarks/train_throughput.py --device cuda   # or auto: see below
    .venv/bin/python benchmarks/train_throughput.py --recipe --compile   # the pipeline's own step, ms per step
    .venv/bin/python benchmarks/train_throughput.py --side-by-side   # two runs of 1 thread vs one of 2 threads

`--recipe` times the step the pipeline takes (mha.training.trainer.Trainer with params.yaml's recipe: Muon, AdamW,
clipping, the weights' average, batches drawn on the device) in ms per step: eager; compiled (train.compile,
with `--compile` on a CPU); and recorded once as a CUDA graph (train.cuda_graph, on a GPU only). On a GPU
(`--device cuda`) it is always timed, before the comparison below.

On a GPU (`--device cuda`, or `auto` where PyTorch sees one) it runs the same interleaved comparison
at B x T = 32 x 128 and 64 x 512, in fp32 and under bf16 autocast, eager and with both models
compiled; mha.model.GPT then uses the sdpa kernel, as training does on CUDA. Without a GPU,
`--device cuda` says so in one line and exits 0.

The figures measured on the 2-core CPU, where a step's time goes, and what the model code kept or left out
because of them: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from mha import machine, schema
from mha.model import GPT, KERNEL_FOR_DEVICE
from mha.schema import PRECISIONS, GPTConfig, model_config, resolve
from mha.training.cuda_graph import EAGER_STEPS
from mha.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[1]
BUILTIN = "nn.TransformerEncoderLayer"
# Goals for the median of the per-round ratios to the built-in layers: on a CPU, in the default fp32 eager step;
# on a GPU, in fp32 eager at both B x T sizes.
GOAL = {"cpu": 1.25, "cuda": 1.2}


class BuiltinGPT(nn.Module):
    """The baseline: PyTorch's own pre-LN encoder layers, causal, in the same GPT shell."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos_emb = nn.Embedding(config.block_size, config.n_embd)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(
                d_model=config.n_embd,
                nhead=config.n_head,
                dim_feedforward=4 * config.n_embd,
                dropout=config.dropout,
                activation="gelu",
                batch_first=True,
                norm_first=True,
            )
            for _ in range(config.n_layer)
        )
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        B, T = idx.shape
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))  # (B, T, C)
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)  # (T, T), −inf above the diagonal
        for layer in self.layers:
            x = layer(x, src_mask=mask, is_causal=True)
        logits = self.lm_head(self.ln_f(x))  # (B, T, vocab)
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))


def make_step(model: nn.Module, lr: float, compiled: bool = False, bf16: bool = False):
    """One training step: forward (under bf16 autocast if asked), cross-entropy, backward, clip, AdamW."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1, fused=True)  # as mha.train uses
    forward = torch.compile(model) if compiled else model
    device_type = next(model.parameters()).device.type

    def step(x: torch.Tensor, y: torch.Tensor) -> None:
        with torch.autocast(device_type, dtype=torch.bfloat16, enabled=bf16):
            _, loss = forward(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    return step


def interleave(steps: dict, x: torch.Tensor, y: torch.Tensor, rounds: int, n: int, sync=lambda: None) -> dict:
    """tokens/s of each step function, per round; each round times every function back to back."""
    for step in steps.values():  # warm-up: allocator, kernels, optimizer state (and compilation)
        for _ in range(3):
            step(x, y)
    sync()
    rates: dict[str, list[float]] = {name: [] for name in steps}
    for i in range(rounds):
        # odd rounds run the functions in reverse order, so neither always runs first (caches, clock drift)
        for name, step in (list(steps.items())[:: -1 if i % 2 else 1]):
            start = time.perf_counter()
            for _ in range(n):
                step(x, y)
            sync()  # CUDA runs asynchronously: wait for the last step before reading the clock
            rates[name].append(x.numel() * n / (time.perf_counter() - start))
    return rates


def show(rates: dict, baseline: str) -> list[float]:
    """Print each median rate and each ratio to the baseline; return the first ratio's per-round values."""
    for name, r in rates.items():
        print(f"  {name:36s} {statistics.median(r):12,.0f} tokens/s  (min {min(r):,.0f}, max {max(r):,.0f})")
    first = []
    for name in (n for n in rates if n != baseline):
        # each round times both back to back, so the ratio within a round cancels most machine noise
        ratios = [ours / theirs for ours, theirs in zip(rates[name], rates[baseline], strict=True)]
        first = first or ratios
        print(f"  ratio {name} / {baseline}: {statistics.median(ratios):.3f}x "
              f"(median of per-round ratios; min {min(ratios):.3f}x, max {max(ratios):.3f}x)")
    return first


def verdict(ratios: list[float], goal: float) -> str:
    """One line: the median ratio against the goal, to three decimals so that 1.246x is not read as 1.25x."""
    median = statistics.median(ratios)
    return f"  goal >= {goal:.2f}x: {'met' if median >= goal else 'NOT met'} ({median:.3f}x)"


def recipe_steps(params: dict, device: torch.device, variants: dict[str, dict], rounds: int, steps: int,
                 sync=lambda: None) -> dict[str, float]:
    """ms per step of mha.training.trainer.Trainer with params.yaml's recipe and model, for each variant (overrides of
    train:), interleaved round by round; each variant's first steps (compilation, recording) are timed apart."""
    trainers, vocab_size = {}, 65
    data = torch.randint(vocab_size, (200_000,), generator=torch.Generator().manual_seed(0))  # (N,), as a corpus
    for name, overrides in variants.items():
        run = resolve({**params, "train": {**params["train"], **overrides, "device": device.type}})
        torch.manual_seed(0)
        model = GPT(run.for_vocab(vocab_size)).to(device).use_kernel(KERNEL_FOR_DEVICE[device.type]).train()
        trainer = Trainer.for_run(model, run.train, data, device,
                                       forward=torch.compile(model) if run.train.compile else None)
        start = time.perf_counter()
        for _ in range(EAGER_STEPS + 2):  # a graph is recorded after EAGER_STEPS steps and replayed from then on
            trainer.train_step()
        sync()
        print(f"  {name}: first {EAGER_STEPS + 2} steps {time.perf_counter() - start:.1f} s "
              "(compilation and recording included)", flush=True)
        trainers[name] = trainer
    x = torch.empty(params["train"]["batch_size"], params["model"]["block_size"])  # (B, T): tokens per step
    rates = interleave({name: lambda _x, _y, t=t: t.train_step() for name, t in trainers.items()}, x, x, rounds,
                       steps, sync)
    ms = {name: 1000 * x.numel() / statistics.median(r) for name, r in rates.items()}
    first = next(iter(ms.values()))
    for name, value in ms.items():
        print(f"  {name:36s} {value:8.2f} ms/step  ({first / value:.2f}x the eager step's speed)")
    return ms


def side_by_side_worker(params: dict, threads: int, steps: int, connection) -> None:
    """A process that trains params.yaml's recipe with ``threads`` threads: ``steps`` steps at each request, the
    seconds they took sent back."""
    machine.flush_denormals()
    torch.set_num_threads(threads)
    machine.keep_freed_memory()
    run = resolve({**params, "train": {**params["train"], "device": "cpu"}})
    torch.manual_seed(0)
    model = GPT(run.for_vocab(65)).train()
    trainer = Trainer.for_run(model, run.train, torch.randint(65, (200_000,)), torch.device("cpu"))
    for _ in range(3):  # lazy optimizer state, the allocator's first blocks
        trainer.train_step()
    while connection.recv():
        start = time.perf_counter()
        for _ in range(steps):
            trainer.train_step()
        connection.send(time.perf_counter() - start)


def side_by_side(params: dict, rounds: int, steps: int) -> float:
    """Steps per second of two runs side by side with one thread each, over one run with two threads: round by
    round, the one run alone and then the two together, so the machine's load falls on both; the median ratio."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    workers = {}
    for name, threads in (("one run, 2 threads", 2), ("side by side A, 1 thread", 1), ("side by side B, 1 thread", 1)):
        ours, theirs = context.Pipe()
        process = context.Process(target=side_by_side_worker, args=(params, threads, steps, theirs), daemon=True)
        process.start()
        workers[name] = (process, ours)
    alone, pair = list(workers.values())[0], list(workers.values())[1:]
    ratios, rates_alone, rates_pair = [], [], []
    for _ in range(rounds):
        alone[1].send(True)
        one = steps / alone[1].recv()
        for _, connection in pair:
            connection.send(True)
        two = 2 * steps / max(connection.recv() for _, connection in pair)  # together: until the slower ends
        rates_alone.append(one)
        rates_pair.append(two)
        ratios.append(two / one)
    for process, connection in workers.values():
        connection.send(False)
        process.join()
    print(f"  one run, 2 threads:            {statistics.median(rates_alone):6.2f} steps/s")
    print(f"  two runs side by side, 1 each: {statistics.median(rates_pair):6.2f} steps/s together")
    ratio = statistics.median(ratios)
    print(f"  ratio: {ratio:.2f}x (median of per-round ratios; min {min(ratios):.2f}x, max {max(ratios):.2f}x)")
    return ratio


def run_cpu(args, params: dict) -> int:
    if args.side_by_side:
        print(f"params.yaml's model and recipe on cpu, {args.rounds} rounds x {args.steps} steps per run:")
        side_by_side(params, args.rounds, args.steps)
        return 0
    flushed = machine.flush_denormals()  # as the training stages do; nothing else has run torch work yet
    if args.keep_freed_memory:
        machine.keep_freed_memory()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = config_for(params, args.block_size)
    steps = {"mha.model.GPT": make_step(GPT(config).train(), lr=1e-3),
             BUILTIN: make_step(BuiltinGPT(config).train(), lr=1e-3)}
    x = torch.randint(0, config.vocab_size, (args.batch_size, args.block_size))  # (B, T)
    y = torch.randint(0, config.vocab_size, (args.batch_size, args.block_size))  # (B, T)
    if args.sdpa:
        steps["mha.model.GPT, sdpa kernel"] = make_step(GPT(config).use_kernel("sdpa").train(), lr=1e-3)
    if args.compile:
        steps["torch.compile(mha.model.GPT)"] = make_step(GPT(config).train(), lr=1e-3, compiled=True)
        start = time.perf_counter()
        steps["torch.compile(mha.model.GPT)"](x, y)
        first = time.perf_counter() - start
        print(f"torch.compile: first step took {first:.1f} s (compilation; less with a warm cache)")
    if args.recipe:
        print(f"the pipeline's step on cpu ({args.threads} threads), params.yaml's recipe, median of {args.rounds} "
              f"rounds x {args.steps} steps:")
        recipe_steps(params, torch.device("cpu"), {"eager": {}, **({"train.compile": {"compile": True}}
                                                                   if args.compile else {})}, args.rounds, args.steps)
    rates = interleave(steps, x, y, args.rounds, args.steps)
    print(
        f"train step on cpu, B={args.batch_size} T={args.block_size} C={config.n_embd} L={config.n_layer} "
        f"H={config.n_head}, {args.threads} threads, torch {torch.__version__}, "
        f"freed memory {'kept' if args.keep_freed_memory else 'returned'}, "
        f"subnormals {'flushed' if flushed else machine.denormals()}, "
        f"median of {args.rounds} rounds x {args.steps} steps"
    )
    ratios = show({"mha.model.GPT": rates["mha.model.GPT"], BUILTIN: rates[BUILTIN],
                   **{k: v for k, v in rates.items() if k not in ("mha.model.GPT", BUILTIN)}}, BUILTIN)
    print(verdict(ratios, GOAL["cpu"]))
    return 0


def run_cuda(args, params: dict, device: str = "cuda") -> int:
    """The same comparison on a GPU, at 32x128 and 64x512, in fp32 and bf16, eager and compiled."""
    device = torch.device(device)
    sync = torch.cuda.synchronize if device.type == "cuda" else lambda: None
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    print(f"the pipeline's step on {name}, params.yaml's recipe (B x T = {params['train']['batch_size']} x "
          f"{params['model']['block_size']}), median of {args.rounds} rounds x {args.steps} steps:")
    recipe_steps(params, device, {"eager": {}, "train.compile": {"compile": True},
                                  "train.cuda_graph": {"cuda_graph": True},
                                  "train.compile + train.cuda_graph": {"compile": True, "cuda_graph": True}},
                 args.rounds, args.steps, sync)
    print(f"train step on {name}, torch {torch.__version__}, "
          f"median of {args.rounds} rounds x {args.steps} steps; mha.model.GPT uses the sdpa kernel")
    for batch_size, block_size in ((32, 128), (64, 512)):
        config = config_for(params, block_size)
        x = torch.randint(0, config.vocab_size, (batch_size, block_size), device=device)  # (B, T)
        y = torch.randint(0, config.vocab_size, (batch_size, block_size), device=device)  # (B, T)
        for precision in PRECISIONS:
            for compiled in (False, True):
                torch.manual_seed(0)
                ours = GPT(config).to(device).use_kernel(KERNEL_FOR_DEVICE["cuda"]).train()
                theirs = BuiltinGPT(config).to(device).train()
                bf16 = precision == "bf16"
                steps = {"mha.model.GPT": make_step(ours, 1e-3, compiled, bf16),
                         BUILTIN: make_step(theirs, 1e-3, compiled, bf16)}
                print(f"B={batch_size} T={block_size} {precision}{' compiled (both)' if compiled else ''}:")
                ratios = show(interleave(steps, x, y, args.rounds, args.steps, sync), BUILTIN)
                if precision == "fp32" and not compiled:
                    print(verdict(ratios, GOAL["cuda"]))
    return 0


def config_for(params: dict, block_size: int) -> GPTConfig:
    """params.yaml's model at ``block_size``, without dropout (PyTorch's layers are timed without it too)."""
    return model_config(params, vocab_size=65, block_size=block_size, dropout=0.0)


def main(argv: list[str] | None = None) -> int:
    params = schema.load(REPO / "params.yaml")
    model_p, train_p = params["model"], params["train"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                        help="auto: cuda when PyTorch sees a GPU, else cpu")
    parser.add_argument("--rounds", type=int, default=11, help="interleaved rounds (the median is reported)")
    parser.add_argument("--steps", type=int, default=10, help="training steps per model per round")
    parser.add_argument("--batch-size", type=int, default=train_p["batch_size"], help="cpu only")
    parser.add_argument("--block-size", type=int, default=model_p["block_size"], help="cpu only")
    parser.add_argument("--threads", type=int, default=train_p["threads"], help="cpu only")
    parser.add_argument("--compile", action="store_true",
                        help="cpu: also time torch.compile(mha.model.GPT) (train.compile: true)")
    parser.add_argument("--recipe", action="store_true",
                        help="cpu: also time the pipeline's own step (mha.training.trainer.Trainer), in ms per step")
    parser.add_argument("--side-by-side", action="store_true",
                        help="cpu: two training runs side by side with 1 thread each against one with 2 threads")
    parser.add_argument("--sdpa", action="store_true",
                        help="cpu: also time mha.model.GPT with the sdpa kernel (what CUDA uses)")
    parser.add_argument("--return-freed-memory", dest="keep_freed_memory", action="store_false",
                        help="cpu: leave glibc's malloc thresholds alone (mha.train keeps freed memory)")
    args = parser.parse_args(argv)
    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        print("train_throughput: --device cuda, but PyTorch sees no CUDA device on this machine; nothing measured")
        return 0
    return run_cuda(args, params) if device == "cuda" else run_cpu(args, params)


if __name__ == "__main__":
    sys.exit(main())
