"""Time to a validation loss: the training recipe of params.yaml against the former one and nanoGPT's.

Three recipes train the same model on the same data, each from the same seed, interleaved in one process
(`--chunk` steps of each in turn, the order rotating every round) so that the machine's load falls on all of
them alike; only the optimizer steps (with the weights' moving average, for a recipe that keeps one) are timed,
not the evaluations, which read the model the recipe keeps (train.ema). For each recipe it prints the steps,
tokens and training seconds it took to first reach each target validation loss (`--targets`, 1.60 and 1.55),
its best validation loss by the time the params.yaml recipe has finished (equal wall time), and the ratios to
the params.yaml recipe.

    .venv/bin/python benchmarks/time_to_loss.py [--targets 1.60 1.55] [--eval-every 50] [--cap 3] [--device cuda]

`--device` (cpu, cuda or auto; default cpu) is where every recipe trains, as train.device would place it: on a
GPU the step is mha.training.trainer's as the pipeline runs it there (sdpa attention, batches drawn on the device),
and each recipe's time is measured after waiting for its last step.

The recipes (RECIPES), each params.yaml's data:, model: and train: with its overrides:
- "params.yaml": the pipeline's recipe as it stands (Muon and AdamW, and the moving average of the weights).
- "former": AdamW alone, as the pipeline trained before its Muon recipe (AdamW on every parameter, lr 4e-3,
  100 warmup steps, cosine to 1e-4 over 4,000 steps, no dropout, the trained weights themselves).
- "nanoGPT": nanoGPT's config/train_shakespeare_char.py: AdamW lr 1e-3, betas (0.9, 0.99), 100 warmup steps,
  cosine to 1e-4 over its 5,000 steps, dropout 0.2, weight decay 0.1, gradient clipping 1.0, no average.
Model size is held fixed: every recipe trains params.yaml's model (d_model 128, 2 layers, 2 heads, block_size
128) on its batches (batch_size × block_size = 32 × 128 characters), so a step sees as many tokens in every
recipe and differs only in optimizer, schedule and regularisation. nanoGPT's own config is a 6-layer,
384-wide model with 64 × 256 batches; only its training recipe is taken here. All three train the
same model code, so "former" differs from "params.yaml" in its optimizer recipe alone.

A recipe stops at the end of its schedule, or once the params.yaml recipe has finished, it has run at least as
long, and it has reached the last target or run `--cap` times as long as the params.yaml recipe took to reach
it (then it is reported as not reached, and its ratio as more than that).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from mha import machine, schema, train
from mha.model import GPT, KERNEL_FOR_DEVICE
from mha.params import ParamsError
from mha.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[1]
REFERENCE = "params.yaml"
RECIPES = {  # name: overrides of params.yaml's sections
    REFERENCE: {},
    "former": {"train": {"optimizer": "adamw", "lr": 0.004, "min_lr": 0.0001, "warmup_iters": 100,
                         "max_iters": 4000, "weight_decay": 0.1, "grad_clip": 1.0, "ema": 0.0},
               "model": {"dropout": 0.0}},
    "nanoGPT": {"train": {"optimizer": "adamw", "lr": 0.001, "min_lr": 0.0001, "warmup_iters": 100,
                          "max_iters": 5000, "weight_decay": 0.1, "grad_clip": 1.0, "ema": 0.0},
                "model": {"dropout": 0.2}},
}


@dataclass
class Run:
    name: str
    trainer: Trainer
    batches: list  # the fixed validation batches, train.validation_batches' (the same for every recipe)
    wall: float = 0.0  # seconds spent in optimizer steps
    curve: list[tuple[int, float, float]] = field(default_factory=list)  # (step, wall, val_loss)
    reached: dict[float, tuple[int, float]] = field(default_factory=dict)  # target: (step, wall) first reached
    done: bool = False

    @property
    def max_iters(self) -> int:
        return self.trainer.cfg.max_iters

    def best_by(self, wall: float) -> float:
        return min((v for _, w, v in self.curve if w <= wall), default=float("nan"))


def corpus_path() -> Path:
    local = REPO / "data" / "raw" / "tinyshakespeare.txt"
    mirror = os.environ.get("MHA_DATA_MIRROR", "")
    if local.exists():
        return local
    if mirror and "://" not in mirror and Path(mirror).exists():
        return Path(mirror)
    sys.exit("time_to_loss: no corpus: run `dvc repro fetch_data` or set MHA_DATA_MIRROR to a copy of tiny Shakespeare")


def recipe_config(params: dict, overrides: dict) -> schema.RunConfig:
    merged = copy.deepcopy(params)
    for section, values in overrides.items():
        merged[section] = {**merged[section], **values}
    return schema.resolve(merged)


def build(name: str, run: schema.RunConfig, corpus: train.Corpus, device: torch.device) -> Run:
    cfg, model_config = run.train, run.for_vocab(corpus.vocab.size)
    torch.manual_seed(cfg.seed)  # the same initial draws as mha.train makes
    model = GPT(model_config).to(device).use_kernel(KERNEL_FOR_DEVICE[device.type])
    trainer = Trainer.for_run(model, cfg, corpus.train, device)
    model.train()
    return Run(name, trainer, train.validation_batches(corpus, cfg, model_config.block_size))


def evaluate(run: Run, targets: list[float]) -> None:
    loss = train.evaluate(run.trainer.evaluated, run.batches, run.trainer.device)  # the weights' average, if any
    run.curve.append((run.trainer.step, run.wall, loss))
    for target in targets:
        if loss <= target and target not in run.reached:
            run.reached[target] = (run.trainer.step, run.wall)


def should_stop(run: Run, reference: Run, last_target: float, cap: float) -> bool:
    if run.trainer.step >= run.max_iters:
        return True
    if run is reference or not reference.done or run.wall < reference.wall:
        return False
    if last_target in run.reached:
        return True
    return last_target in reference.reached and run.wall >= cap * reference.reached[last_target][1]


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def race(runs: list[Run], targets: list[float], chunk: int, eval_every: int, cap: float) -> None:
    reference = runs[0]
    for run in runs:
        evaluate(run, targets)
    started, shown, round_index = time.perf_counter(), 0.0, 0
    while not all(run.done for run in runs):
        order = runs[round_index % len(runs):] + runs[:round_index % len(runs)]  # who goes first rotates
        round_index += 1
        for run in (r for r in order if not r.done):
            steps = min(chunk, run.max_iters - run.trainer.step)
            begin = time.perf_counter()
            for _ in range(steps):
                run.trainer.train_step()
            sync(run.trainer.device)  # a GPU runs the steps after they are launched: the time is theirs
            run.wall += time.perf_counter() - begin
            if run.trainer.step % eval_every == 0 or run.trainer.step == run.max_iters:
                evaluate(run, targets)
            run.done = should_stop(run, reference, targets[-1], cap)
        if time.perf_counter() - shown > 30:
            shown = time.perf_counter()
            print(f"  {shown - started:6.0f} s: " + "; ".join(
                f"{r.name} step {r.trainer.step} val {r.curve[-1][2]:.3f}" for r in runs), file=sys.stderr, flush=True)


def report(runs: list[Run], targets: list[float], tokens_per_step: int, cap: float) -> str:
    reference = runs[0]
    lines = [f"{'recipe':<12} {'target':>6} {'steps':>6} {'tokens':>11} {'seconds':>8} {'× time':>7} {'× steps':>7}"]
    for run in runs:
        for target in targets:
            if target in run.reached:
                step, wall = run.reached[target]
                ref = reference.reached.get(target)
                ratio = f"{wall / ref[1]:.2f}" if ref else "-"
                steps_ratio = f"{step / ref[0]:.2f}" if ref else "-"
                lines.append(f"{run.name:<12} {target:>6.2f} {step:>6} {step * tokens_per_step:>11,} {wall:>8.1f} "
                             f"{ratio:>7} {steps_ratio:>7}")
            else:
                ref = reference.reached.get(target)
                more = f">{run.wall / ref[1]:.2f}" if ref else "-"
                lines.append(f"{run.name:<12} {target:>6.2f} {'not reached in ' + str(run.trainer.step) + ' steps':>34}"
                             f" {more:>7}")
    equal = reference.wall
    lines.append("")
    lines.append(f"best validation loss by {equal:.1f} s of training (the {REFERENCE} recipe's whole run), "
                 "and over each recipe's whole run:")
    for run in runs:
        lines.append(f"  {run.name:<12} {run.best_by(equal):.4f}   {min(v for _, _, v in run.curve):.4f} "
                     f"after {run.trainer.step} steps, {run.wall:.1f} s")
    last = targets[-1]
    former = next((r for r in runs if r.name == "former"), None)
    if former is not None and last in reference.reached:
        if last in former.reached:
            share = reference.reached[last][1] / former.reached[last][1]
            lines.append(f"\n{REFERENCE} reaches {last:.2f} in {share:.2f}× the former recipe's training time "
                         f"({'at most' if share <= 0.5 else 'more than'} half)")
        else:
            lines.append(f"\nthe former recipe did not reach {last:.2f} within {former.wall:.1f} s "
                         f"({former.wall / reference.reached[last][1]:.2f}× the {REFERENCE} recipe's time to it)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    machine.flush_denormals()  # as the training stages do, before torch starts its threads
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=float, nargs="+", default=[1.60, 1.55], help="validation losses, falling")
    parser.add_argument("--eval-every", type=int, default=50, help="steps between evaluations (not timed)")
    parser.add_argument("--chunk", type=int, default=10, help="steps of one recipe before the next one's turn")
    parser.add_argument("--cap", type=float, default=3.0,
                        help="stop a recipe after this many times the params.yaml recipe's time to the last target")
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    parser.add_argument("--params", type=Path, default=REPO / "params.yaml", help="its data:, model: and train:")
    parser.add_argument("--device", choices=schema.DEVICES, default="cpu",
                        help="where the recipes train (auto: cuda when PyTorch sees a GPU, else cpu)")
    args = parser.parse_args(argv)
    targets = sorted(args.targets, reverse=True)
    params = schema.load(args.params)
    names = [REFERENCE, *(n for n in args.recipes if n != REFERENCE)]
    configs = {name: recipe_config(params, {**RECIPES[name], "train": {**RECIPES[name].get("train", {}),
                                                                       "device": args.device}})
               for name in names}
    cfg = configs[REFERENCE].train
    try:
        device = train.setup(cfg)  # threads, and the CPU's allocator setting, as a training stage sets them
    except ParamsError as exc:
        sys.exit(f"time_to_loss: {exc}")
    corpus = train.Corpus.load(corpus_path(), configs[REFERENCE].data)
    runs = [build(name, configs[name], corpus, device) for name in names]
    for run in runs:
        c = run.trainer.cfg
        print(f"{run.name}: {c.optimizer}, lr {c.lr:g}" + (f", muon_lr {c.muon_lr:g}" if c.optimizer == "muon" else "")
              + f", warmup {c.warmup_iters}, cosine to {c.min_lr:g} over {c.max_iters} steps, dropout "
              f"{run.trainer.model.config.dropout:g}, weight decay {c.weight_decay:g}, clip {c.grad_clip:g}, "
              + (f"weights averaged with decay {c.ema:g}" if c.ema else "no average"))
    tokens_per_step = runs[0].trainer.tokens_per_step  # the same for every recipe
    print(f"model: {configs[REFERENCE].model.n_layer} layers, {configs[REFERENCE].model.n_head} heads, d_model "
          f"{configs[REFERENCE].model.n_embd}; {tokens_per_step:,} tokens per step; on "
          + (torch.cuda.get_device_name(device) if device.type == "cuda" else f"{cfg.threads} threads, "
             f"{machine.cpu_model()}"), flush=True)
    race(runs, targets, args.chunk, args.eval_every, args.cap)
    print(report(runs, targets, tokens_per_step, args.cap))
    return 0


if __name__ == "__main__":
    sys.exit(main())
