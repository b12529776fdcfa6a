"""Train mha.model.GPT on a character corpus: seeded, resumable, with fixed evaluation batches.

`resolve(params)` turns the `model:` and `train:` sections of params.yaml into a validated
(GPTConfig fields, TrainConfig) pair, refusing unknown keys, wrong types and bad values with a
message naming the key. `train(...)` runs AdamW with linear warmup and cosine decay, clips
gradients, evaluates every `eval_interval` steps on batches drawn once from a fixed seed, and
writes every output atomically. A checkpoint (weights, optimizer, step, RNG states, history) is
written every `checkpoint_interval` steps; a later run with the same config and data resumes from
it and ends with exactly the numbers of an uninterrupted run.

The device picks the attention kernel (mha.model.KERNEL_FOR_DEVICE). `train.precision: bf16` runs the
training forward under bfloat16 autocast (CUDA only; refused on a CPU) and `train.compile: true` runs
it through torch.compile; evaluation, sampling and the heat-maps stay eager in fp32. All three are in
the run record, and a checkpoint made with other settings is not resumed.
"""

from __future__ import annotations

import hashlib
import io
import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from mha import machine
from mha.data import CharVocab, split_text
from mha.files import atomic_write_bytes, atomic_write_text, write_json
from mha.model import GPT, KERNEL_FOR_DEVICE, GPTConfig, check_types

DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("fp32", "bf16")  # bf16: the forward under torch.autocast(bfloat16), on CUDA only
EXCERPT_CHARS = 64  # characters of validation text shown in the attention heat-maps
PLOT_HEADER = ("step", "tokens", "train_loss", "val_loss", "lr")
# The metrics file (what `dvc metrics show` prints) holds the numbers a person compares between runs;
# every result, these included, is in the run record's "results" section, which the report reads.
SUMMARY_KEYS = ("best_val_loss", "tokens_per_second")


@dataclass
class TrainConfig:
    batch_size: int = 32
    max_iters: int = 3000
    lr: float = 3e-3  # peak learning rate, reached after warmup_iters
    warmup_iters: int = 100
    min_lr: float = 3e-4  # the cosine decays to this at max_iters
    weight_decay: float = 0.1  # on matrices only, not on biases, LayerNorm or embeddings' rows
    grad_clip: float = 1.0  # max global gradient norm; 0 turns clipping off
    eval_interval: int = 250
    eval_iters: int = 20  # fixed batches of train and of validation text per evaluation
    seed: int = 1337
    threads: int = 2  # torch.set_num_threads; a different count changes the floating-point results
    device: str = "auto"  # cpu, cuda or auto (cuda when available)
    sample_chars: int = 500
    sample_prompt: str = "\n"
    checkpoint_interval: int = 250
    precision: str = "fp32"  # or bf16: autocast to bfloat16 on CUDA; refused on CPU (see check_device)
    compile: bool = False  # torch.compile the training forward (CPU or CUDA); evaluation stays eager

    def __post_init__(self) -> None:
        check_types(self, "train")
        for name in ("batch_size", "max_iters", "lr", "eval_interval", "eval_iters", "threads", "checkpoint_interval"):
            if getattr(self, name) <= 0:
                raise ValueError(f"train.{name} must be positive, got {getattr(self, name)!r}")
        for name in ("warmup_iters", "min_lr", "weight_decay", "grad_clip", "sample_chars"):
            if getattr(self, name) < 0:
                raise ValueError(f"train.{name} must be zero or positive, got {getattr(self, name)!r}")
        if self.min_lr > self.lr:
            raise ValueError(f"train.min_lr must not exceed train.lr ({self.lr!r}), got {self.min_lr!r}")
        if self.device not in DEVICES:
            raise ValueError(f"train.device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"train.precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        if not self.sample_prompt:
            raise ValueError("train.sample_prompt must not be empty (generation needs at least one character)")


MODEL_KEYS = tuple(f.name for f in fields(GPTConfig) if f.name not in ("vocab_size", "attention"))


def resolve(params: dict, attention: bool = True) -> tuple[dict, TrainConfig]:
    """Validate params.yaml's `model:` and `train:` sections. Returns (GPTConfig kwargs without
    vocab_size, TrainConfig). Raises ValueError naming the offending key."""
    if not isinstance(params, dict):
        raise ValueError(f"params must be a mapping with model: and train: sections, got {type(params).__name__}")
    out = []
    for section, allowed in (("model", MODEL_KEYS), ("train", tuple(f.name for f in fields(TrainConfig)))):
        values = params.get(section)
        if not isinstance(values, dict):
            raise ValueError(f"params.yaml needs a {section}: section (a mapping), got {values!r}")
        unknown = sorted(set(values) - set(allowed))
        if unknown:
            raise ValueError(f"{section}.{unknown[0]} is not a known key; allowed: {', '.join(allowed)}")
        out.append(values)
    model_values, train_values = out
    val_fraction = (params.get("data") or {}).get("val_fraction", 0.1)
    if isinstance(val_fraction, bool) or not isinstance(val_fraction, (int, float)) or not 0 < val_fraction < 1:
        raise ValueError(f"data.val_fraction must be a number between 0 and 1 (exclusive), got {val_fraction!r}")
    missing = sorted(set(MODEL_KEYS) - set(model_values))
    if missing:
        raise ValueError(f"model.{missing[0]} is missing; the model section needs {', '.join(MODEL_KEYS)}")
    try:
        # vocab_size is a placeholder here; the corpus sets it
        GPTConfig(vocab_size=1, attention=attention, **model_values)
    except ValueError as exc:
        raise ValueError(str(exc).replace("GPTConfig.", "model.")) from None
    return {**model_values, "attention": attention}, TrainConfig(**train_values)


@dataclass(frozen=True)
class Corpus:
    vocab: CharVocab
    train: torch.Tensor  # (N_train,) int64 ids
    val: torch.Tensor  # (N_val,) int64 ids
    val_text: str
    sha256: str
    val_fraction: float

    @classmethod
    def load(cls, path: str | Path, val_fraction: float = 0.1) -> Corpus:
        raw = Path(path).read_bytes()
        text = raw.decode("utf-8")
        vocab = CharVocab.from_text(text)  # the whole corpus, so validation has no unknown characters
        train_text, val_text = split_text(text, val_fraction)
        return cls(
            vocab=vocab,
            train=torch.from_numpy(vocab.encode(train_text)),
            val=torch.from_numpy(vocab.encode(val_text)),
            val_text=val_text,
            sha256=hashlib.sha256(raw).hexdigest(),
            val_fraction=val_fraction,
        )


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


def fixed_batches(
    data: torch.Tensor, cfg: TrainConfig, block_size: int, seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(seed)
    return [get_batch(data, cfg.batch_size, block_size, generator) for _ in range(cfg.eval_iters)]


@torch.no_grad()
def evaluate(model: GPT, batches, device: torch.device) -> float:
    model.eval()
    losses = [model(x.to(device), y.to(device))[1].item() for x, y in batches]
    model.train()
    return float(np.mean(losses))


def resolve_device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("train.device is 'cuda' but PyTorch sees no CUDA device here; use cpu or auto")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def check_device(cfg: TrainConfig, device: torch.device) -> None:
    """Refuse settings the resolved device cannot honour, naming the key."""
    if cfg.precision == "bf16" and device.type != "cuda":
        raise ValueError(f"train.precision is 'bf16' but this run is on {device.type}: "
                         "bf16 autocast is for CUDA only; use fp32 here")


def code_hashes() -> dict:
    """sha256 of the modules that define the model and the loop: a checkpoint from other code is not resumed."""
    from mha import model as model_module

    return {Path(f).name: hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in (model_module.__file__, __file__)}


_FINGERPRINT_KEYS = ("model", "train", "device", "code")


def _fingerprint(resolved: dict) -> str:
    """What a checkpoint must match to be resumed: every setting and line of code that changes the numbers,
    and the data."""
    keep = {k: resolved[k] for k in _FINGERPRINT_KEYS}
    keep["data_sha256"] = resolved["data"]["sha256"]
    return hashlib.sha256(repr(sorted(_flatten(keep).items())).encode()).hexdigest()


def _flatten(d: dict, prefix: str = "") -> dict:
    flat = {}
    for k, v in d.items():
        flat.update(_flatten(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return flat


def _difference(old: dict, new: dict) -> str:
    a, b = _flatten({k: old.get(k) for k in _FINGERPRINT_KEYS}), _flatten({k: new[k] for k in _FINGERPRINT_KEYS})
    a["data.sha256"], b["data.sha256"] = old.get("data", {}).get("sha256"), new["data"]["sha256"]
    changed = [
        f"{k} changed" if k.startswith("code.") else f"{k} {a.get(k)!r} -> {b.get(k)!r}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]
    return ", ".join(changed) or "the fingerprint differs"


@dataclass
class Outputs:
    metrics: Path
    plot: Path
    model: Path
    config: Path
    sample: Path
    attention: Path | None = None


def _save_checkpoint(path: Path, state: dict) -> None:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic_write_bytes(path, buffer.getvalue())  # a kill -9 leaves the previous checkpoint intact


def _load_checkpoint(path: Path, resolved: dict, log: Callable[[str], None]) -> dict | None:
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
        old = state["resolved"]
        fingerprint = state["fingerprint"]
    except Exception as exc:  # noqa: BLE001 - a file from elsewhere, or from an older format
        log(f"not resuming from {path}: cannot read it ({type(exc).__name__}: {exc}); starting fresh")
        return None
    if fingerprint != _fingerprint(resolved):
        log(f"not resuming from {path}: its config, data or code differ ({_difference(old, resolved)}); starting fresh")
        return None
    log(f"resuming from {path} at step {state['step']} of {resolved['train']['max_iters']}")
    return state


def excerpt_start(val_text: str, length: int) -> int:
    """The first speaker's line of the validation text (after a blank line), so the excerpt reads well."""
    start = val_text.find("\n\n") + 2
    return start if 0 < start <= len(val_text) - length else 0


def train(
    model_values: dict,
    cfg: TrainConfig,
    corpus: Corpus,
    outputs: Outputs,
    *,
    data_path: str = "",
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
    progress: bool = True,
) -> dict:
    """Train (or resume), write every output, return the metrics."""
    config = GPTConfig(vocab_size=corpus.vocab.size, **model_values)
    if config.block_size >= len(corpus.val):
        raise ValueError(
            f"model.block_size is {config.block_size} but the validation split has only {len(corpus.val)} characters; "
            "use a smaller block_size or a larger data.val_fraction"
        )
    device = resolve_device(cfg.device)
    check_device(cfg, device)
    if device.type == "cpu":
        machine.keep_freed_memory()  # faster steps, same numbers
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    kernel = KERNEL_FOR_DEVICE[device.type]
    resolved = {
        "model": config.to_dict(),
        "train": asdict(cfg),  # precision and compile among them: a checkpoint made with others is not resumed
        "device": device.type,
        "attention_kernel": kernel if config.attention else None,
        "data": {"path": str(data_path), "sha256": corpus.sha256, "val_fraction": corpus.val_fraction,
                 "train_chars": len(corpus.train), "val_chars": len(corpus.val)},
        "versions": machine.versions(),
        "cpu": machine.cpu_model(),
        "code": code_hashes(),
    }
    model = GPT(config).to(device).use_kernel(kernel)
    forward = torch.compile(model) if cfg.compile else model  # shares model's parameters
    resolved["parameters"] = model.num_parameters()
    write_json(outputs.config, resolved)

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        # fused: one kernel for every parameter, ~5-10% faster per step on CPU
        lr=cfg.lr, betas=(0.9, 0.99), fused=True,
    )
    batch_gen = torch.Generator().manual_seed(cfg.seed)
    # Evaluation batches are drawn once, from their own seeds: every evaluation sees the same text.
    eval_train = fixed_batches(corpus.train, cfg, config.block_size, cfg.seed + 1)
    eval_val = fixed_batches(corpus.val, cfg, config.block_size, cfg.seed + 2)

    step, history, wall = 0, [], 0.0
    state = _load_checkpoint(outputs.model, resolved, log)
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        batch_gen.set_state(state["rng"]["batches"])
        torch.set_rng_state(state["rng"]["torch"])
        if device.type == "cuda" and state["rng"].get("cuda") is not None:
            torch.cuda.set_rng_state(state["rng"]["cuda"])
        step, history, wall = state["step"], state["history"], state["wall_seconds"]

    def checkpoint() -> None:
        _save_checkpoint(outputs.model, {
            "fingerprint": _fingerprint(resolved),
            "resolved": resolved,
            "config": config.to_dict(),
            "vocab": corpus.vocab.chars,
            "model": {k: v.cpu() for k, v in model.state_dict().items()},
            "optimizer": optimizer.state_dict(),
            "step": step,
            "history": history,
            "wall_seconds": wall,
            "rng": {"batches": batch_gen.get_state(), "torch": torch.get_rng_state(),
                    "cuda": torch.cuda.get_rng_state() if device.type == "cuda" else None},
        })

    def record() -> None:
        history.append({"step": step, "tokens": step * cfg.batch_size * config.block_size,
                        "train_loss": evaluate(model, eval_train, device),
                        "val_loss": evaluate(model, eval_val, device),
                        "lr": lr_at(min(step, cfg.max_iters - 1), cfg)})

    tokens_per_step = cfg.batch_size * config.block_size
    if not history:
        record()  # the loss before any training: ln(vocab) for a uniform guess
    bar = tqdm(total=cfg.max_iters, initial=step, disable=not progress,
               desc="attention" if config.attention else "no attention",
               unit="it", mininterval=1.0, file=sys.stderr)
    model.train()
    started = run_started = time.perf_counter()  # started: since the last checkpoint; run_started: this process
    run_start_step = step
    while step < cfg.max_iters:
        lr = lr_at(step, cfg)
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = get_batch(corpus.train, cfg.batch_size, config.block_size, batch_gen)  # (B, T), (B, T)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.precision == "bf16"):
            _, loss = forward(x.to(device), y.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        step += 1
        bar.update(1)
        if step % cfg.eval_interval == 0 or step == cfg.max_iters:
            record()
        if step % 50 == 0 or step == cfg.max_iters:
            elapsed = time.perf_counter() - run_started
            bar.set_postfix(loss=f"{loss.item():.3f}", val=f"{history[-1]['val_loss']:.3f}",
                            tok_s=f"{(step - run_start_step) * tokens_per_step / max(elapsed, 1e-9):,.0f}",
                            refresh=False)
        if step % cfg.checkpoint_interval == 0 or step == cfg.max_iters:
            wall_now = wall + time.perf_counter() - started
            wall, started = wall_now, time.perf_counter()
            checkpoint()
            log(f"checkpoint: step {step} saved to {outputs.model}")
    bar.close()
    wall += time.perf_counter() - started

    tokens_seen = step * tokens_per_step
    metrics = {
        "best_val_loss": min(h["val_loss"] for h in history),
        "final_val_loss": history[-1]["val_loss"],
        "final_train_loss": history[-1]["train_loss"],
        "iterations": step,
        "tokens_seen": tokens_seen,
        "parameters": resolved["parameters"],
        "wall_seconds": round(wall, 3),
        "tokens_per_second": round(tokens_seen / max(wall, 1e-9), 1),
    }
    write_json(outputs.metrics, {key: metrics[key] for key in SUMMARY_KEYS})
    write_json(outputs.config, {**resolved, "results": metrics})
    rows = [",".join(PLOT_HEADER)] + [
        f"{h['step']},{h['tokens']},{h['train_loss']:.6f},{h['val_loss']:.6f},{h['lr']:.8g}" for h in history
    ]
    atomic_write_text(outputs.plot, "\n".join(rows) + "\n")
    atomic_write_text(outputs.sample, sample(model, corpus.vocab, cfg, device))
    if outputs.attention is not None:
        write_json(outputs.attention, attention_payload(model, corpus, device))
    return metrics


def sample(model: GPT, vocab: CharVocab, cfg: TrainConfig, device: torch.device) -> str:
    """sample_chars characters after the fixed prompt, from a generator seeded with train.seed."""
    generator = torch.Generator(device=device).manual_seed(cfg.seed)
    prompt = torch.tensor(vocab.encode(cfg.sample_prompt), device=device)[None]  # (1, P)
    model.eval()
    out = model.generate(prompt, cfg.sample_chars, temperature=1.0, generator=generator)  # (1, P + n)
    return vocab.decode(out[0].tolist())


def attention_payload(model: GPT, corpus: Corpus, device: torch.device) -> dict:
    length = min(EXCERPT_CHARS, model.config.block_size)
    start = excerpt_start(corpus.val_text, length)
    excerpt = corpus.val_text[start : start + length]
    idx = torch.tensor(corpus.vocab.encode(excerpt), device=device)[None]  # (1, T)
    weights = model.attention_weights(idx)[:, 0]  # (L, H, T, T)
    return {"excerpt": excerpt, "tokens": list(excerpt), "n_layer": model.config.n_layer, "n_head": model.config.n_head,
            "weights": weights.double().cpu().tolist()}
