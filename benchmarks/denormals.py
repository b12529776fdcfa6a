"""Training-step time with subnormal floats kept (IEEE, the baseline) against flushed to zero on every thread.

The training stages call mha.machine.flush_denormals() first thing. This measures what that buys, on two
models: the default one, and one whose softmax saturates as the lab's no_scale run does once trained (one
head, d_k = 128, no 1/√d_k, and W_QKV scaled by --saturation at initialisation, so that most attention
weights are 0 or subnormal and so are their gradients). Each measurement is its own process, because the
flags must be set before PyTorch starts its thread pool; the two settings alternate, round by round.

    .venv/bin/python benchmarks/denormals.py [--rounds 5 --steps 10 --saturation 10]

The figures measured on the 2-core CPU: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

MODES = ("kept", "flushed")
MODELS = ("default", "saturated")


def child(mode: str, model_name: str, steps: int, saturation: float, threads: int) -> dict:
    """In a fresh process: flush (or not) before any torch work, then time training steps."""
    from mha import machine

    if mode == "flushed" and not machine.flush_denormals():
        raise SystemExit("denormals: could not flush on every thread (the thread pool started first)")
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from train_throughput import make_step

    from mha import schema
    from mha.model import GPT
    from mha.schema import model_config

    course = schema.load(Path(__file__).resolve().parents[1] / "params.yaml")

    machine.keep_freed_memory()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if model_name == "saturated":
        model = GPT(model_config(course, n_head=1, scale_scores=False))
        with torch.no_grad():
            for block in model.blocks:
                block.attn.c_attn.weight.mul_(saturation)  # large q·k: one-hot rows, subnormal neighbours
    else:
        model = GPT(model_config(course))
    x = torch.randint(0, 65, (32, 128))  # (B, T)
    y = torch.randint(0, 65, (32, 128))  # (B, T)
    step = make_step(model.train(), lr=1e-4)  # a small lr: the weights stay saturated for the whole run
    for _ in range(3):
        step(x, y)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step(x, y)
        times.append(time.perf_counter() - start)
    with torch.no_grad():
        weights = model.attention_weights(x[:4])  # (L, 4, H, T, T)
    subnormal = ((weights > 0) & (weights < torch.finfo(torch.float32).tiny)).float().mean().item()
    return {"ms": statistics.median(times) * 1e3, "mode": machine.denormals(), "subnormal_weights": subnormal}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10, help="timed training steps per process")
    parser.add_argument("--saturation", type=float, default=10.0, help="factor on W_QKV of the saturated model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child, args.steps, args.saturation, args.threads)))
        return 0
    results: dict[tuple[str, str], list[dict]] = {(m, n): [] for n in MODELS for m in MODES}
    for i in range(args.rounds):
        for model_name in MODELS:
            for mode in MODES[:: -1 if i % 2 else 1]:  # alternate which setting runs first
                done = subprocess.run(
                    [sys.executable, __file__, "--child", mode, model_name, "--steps", str(args.steps),
                     "--saturation", str(args.saturation), "--threads", str(args.threads)],
                    capture_output=True, text=True, check=False)
                if done.returncode:
                    print(done.stderr.strip() or done.stdout.strip(), file=sys.stderr)
                    return 1
                results[mode, model_name].append(json.loads(done.stdout))
        print(f"round {i + 1}/{args.rounds} done", file=sys.stderr)
    print(f"training step (forward, backward, AdamW), B=32 T=128, {args.threads} threads, median of "
          f"{args.rounds} processes x {args.steps} steps; baseline: subnormals kept")
    for model_name in MODELS:
        kept = [r["ms"] for r in results["kept", model_name]]
        flushed = [r["ms"] for r in results["flushed", model_name]]
        ratios = [k / f for k, f in zip(kept, flushed, strict=True)]
        sub = statistics.median(r["subnormal_weights"] for r in results["kept", model_name])
        # what mha.machine.denormals() probed in each setting's processes: "kept" and "flushed" when all went well
        probed = "/".join(",".join(sorted({r["mode"] for r in results[mode, model_name]})) for mode in MODES)
        print(f"  {model_name:10s} kept {statistics.median(kept):7.1f} ms   "
              f"flushed {statistics.median(flushed):7.1f} ms"
              f"   speed-up {statistics.median(ratios):.2f}x (min {min(ratios):.2f}x, max {max(ratios):.2f}x)"
              f"   subnormal attention weights when kept: {sub:.2%}   threads probed: {probed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
