"""Train mha.model.GPT on a character corpus: seeded, resumable, with fixed evaluation batches.

`train(run, corpus, outputs)` builds the model and optimizer for a resolved RunConfig (mha.config),
resumes from a matching checkpoint (mha.checkpoint), runs the loop of mha.loop with one callback that
evaluates every `eval_interval` steps on batches drawn once from a fixed seed and checkpoints every
`checkpoint_interval` steps, and then writes every output (`write_outputs`, in the formats of
mha.artifacts). A run resumed after a kill ends with exactly the numbers of an uninterrupted one, and with
byte-identical outputs: its wall time, speed and machine go only into its run log (mha.artifacts.runlog),
written beside each checkpoint and at the end.

The device picks the attention kernel (mha.model.KERNEL_FOR_DEVICE). `train.precision: bf16` runs the
training forward under bfloat16 autocast (CUDA only; refused on a CPU) and `train.compile: true` runs
it through torch.compile; evaluation, sampling and the heat-maps stay eager in fp32. All three are in
the run record, and a checkpoint made with other settings is not resumed.

The stages flush subnormal floats to zero (mha.machine.flush_denormals, first thing in their process);
`train` does not change that setting, it probes it and records it (`denormals` in the run record), and
a checkpoint made with the other setting is not resumed either.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from mha import checkpoint, loop, machine
from mha import model as model_module
from mha.artifacts import run as artifacts
from mha.artifacts.attention import ATTENTION_MAPS, AttentionMaps
from mha.artifacts.run import RUN_RECORD, Curve, CurveRow, RunRecord, RunResults
from mha.artifacts.runlog import RUN_LOG, RunLog, logged_at, read_run_log
from mha.config import RunConfig, TrainConfig
from mha.data import CharVocab, DataConfig, split_text
from mha.errors import ERRORS
from mha.model import GPT, KERNEL_FOR_DEVICE, GPTConfig

EXCERPT_CHARS = 64  # characters of validation text shown in the attention heat-maps
PROGRESS_EVERY = 50  # steps between updates of the progress bar's loss and speed


@dataclass(frozen=True)
class Corpus:
    vocab: CharVocab
    train: torch.Tensor  # (N_train,) int64 ids
    val: torch.Tensor  # (N_val,) int64 ids
    val_text: str
    sha256: str
    val_fraction: float

    @classmethod
    def load(cls, path: str | Path, data: DataConfig) -> Corpus:
        raw = artifacts.corpus_source(path).read_bytes()
        text = raw.decode("utf-8")
        vocab = CharVocab.from_text(text)  # the whole corpus, so validation has no unknown characters
        train_text, val_text = split_text(text, data.val_fraction)
        return cls(
            vocab=vocab,
            train=torch.from_numpy(vocab.encode(train_text)),
            val=torch.from_numpy(vocab.encode(val_text)),
            val_text=val_text,
            sha256=hashlib.sha256(raw).hexdigest(),
            val_fraction=data.val_fraction,
        )


@dataclass(frozen=True)
class Outputs:
    metrics: Path
    plot: Path
    model: Path
    config: Path  # the run record
    sample: Path
    attention: Path | None = None  # heat-map data, for a model with attention
    run_log: Path | None = None  # not a DVC output: wall time and speed, which differ on every machine


@dataclass(frozen=True)
class Trained:
    """A finished run: its results, the same on every machine, and its log, this machine's."""

    results: RunResults
    log: RunLog


def fixed_batches(
    data: torch.Tensor, cfg: TrainConfig, block_size: int, seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(seed)
    return [loop.get_batch(data, cfg.batch_size, block_size, generator) for _ in range(cfg.eval_iters)]


@torch.no_grad()
def evaluate(model: GPT, batches, device: torch.device) -> float:
    model.eval()
    losses = [model(x.to(device), y.to(device))[1].item() for x, y in batches]
    model.train()
    return float(np.mean(losses))


def resolve_device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise ERRORS.error("train.no_cuda")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def check_device(cfg: TrainConfig, device: torch.device) -> None:
    """Refuse settings the resolved device cannot honour, naming the key."""
    if cfg.precision == "bf16" and device.type != "cuda":
        raise ERRORS.error("train.bf16_off_cuda", device=device.type)


def check_block_size(config: GPTConfig, corpus: Corpus) -> None:
    if config.block_size >= len(corpus.val):
        raise ERRORS.error("train.block_too_long", block_size=repr(config.block_size), val_chars=len(corpus.val))


def code_hashes() -> dict[str, str]:
    """The modules whose code changes the numbers: a checkpoint from other code is not resumed."""
    return checkpoint.code_hashes(model_module, loop, sys.modules[__name__])


def run_record(run: RunConfig, config: GPTConfig, corpus: Corpus, device: torch.device, parameters: int,
               data_path: str) -> RunRecord:
    return RunRecord(
        model=config.to_dict(),
        train=asdict(run.train),  # precision and compile among them: a checkpoint made with others is not resumed
        device=device.type,
        attention_kernel=KERNEL_FOR_DEVICE[device.type] if config.attention else None,
        data=artifacts.DataRecord(path=data_path, sha256=corpus.sha256, val_fraction=corpus.val_fraction,
                        train_chars=len(corpus.train), val_chars=len(corpus.val)),
        versions=machine.versions(),
        denormals=machine.denormals(),  # after set_num_threads: every thread that will compute is probed
        code=code_hashes(),
        parameters=parameters,
    )


class Stopwatch:
    """Training time over every process that trained this run; `lap()` adds the time since the last lap."""

    def __init__(self, before: float):
        self.total, self._since = before, time.perf_counter()

    def lap(self) -> float:
        now = time.perf_counter()
        self.total, self._since = self.total + now - self._since, now
        return self.total


def results_of(history: list[CurveRow], steps: int, tokens_per_step: int, parameters: int) -> RunResults:
    return RunResults(
        best_val_loss=min(row.val_loss for row in history),
        final_val_loss=history[-1].val_loss,
        final_train_loss=history[-1].train_loss,
        iterations=steps,
        tokens_seen=steps * tokens_per_step,
        parameters=parameters,
    )


def log_entry(fingerprint: str, steps: int, tokens_per_step: int, wall: float, started: str,
              finished: bool) -> RunLog:
    """The run log after ``steps`` steps in ``wall`` seconds of training, on this machine, now."""
    return RunLog(fingerprint=fingerprint, step=steps, wall_seconds=round(wall, 3),
                  tokens_per_second=round(steps * tokens_per_step / max(wall, 1e-9), 1), finished=finished,
                  cpu=machine.cpu_model(), host=machine.host(), started=started, written=logged_at())


def earlier_time(outputs: Outputs, fingerprint: str, step: int, log: Callable[[str], None]) -> RunLog | None:
    """The log of the run a checkpoint at ``step`` resumes, for its training time so far: None, said so, when
    there is none (the log is missing, another run's, or of another step: the process was killed between the
    checkpoint and its log)."""
    if outputs.run_log is None:
        return None
    earlier = read_run_log(outputs.run_log)
    if earlier is None or (earlier.fingerprint, earlier.step) != (fingerprint, step):
        log(f"no run log of this run at step {step} in {outputs.run_log}: its time before this process is not "
            "counted in its wall time")
        return None
    return earlier


def train(
    run: RunConfig,
    corpus: Corpus,
    outputs: Outputs,
    *,
    data_path: str = "",
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
    progress: bool = True,
) -> Trained:
    """Train (or resume), write every output and the run log, return the results and the log."""
    cfg = run.train
    config = run.for_vocab(corpus.vocab.size)
    check_block_size(config, corpus)
    device = resolve_device(cfg.device)
    check_device(cfg, device)
    if device.type == "cpu":
        machine.keep_freed_memory()  # faster steps, same numbers
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)  # before GPT(): it draws the initial weights
    model = GPT(config).to(device).use_kernel(KERNEL_FOR_DEVICE[device.type])
    record = run_record(run, config, corpus, device, model.num_parameters(), data_path)
    fingerprint = checkpoint.fingerprint(asdict(record))
    RUN_RECORD.write(outputs.config, record)

    trainer = loop.Trainer(
        model=model,
        forward=torch.compile(model) if cfg.compile else model,
        optimizer=loop.optimizer(model, cfg),
        cfg=cfg, data=corpus.train, block_size=config.block_size, device=device,
        batches=torch.Generator().manual_seed(cfg.seed),
    )
    # Evaluation batches are drawn once, from their own seeds: every evaluation sees the same text.
    eval_train = fixed_batches(corpus.train, cfg, config.block_size, cfg.seed + 1)
    eval_val = fixed_batches(corpus.val, cfg, config.block_size, cfg.seed + 2)
    tokens_per_step = cfg.batch_size * config.block_size

    def evaluation(step: int) -> CurveRow:
        return CurveRow(step=step, tokens=step * tokens_per_step, train_loss=evaluate(model, eval_train, device),
                        val_loss=evaluate(model, eval_val, device), lr=loop.lr_at(min(step, cfg.max_iters - 1), cfg))

    history, wall, started_at = [], 0.0, logged_at()
    resumed = checkpoint.load(outputs.model, asdict(record), log)
    if resumed is not None:
        model.load_state_dict(resumed.model)
        trainer.optimizer.load_state_dict(resumed.optimizer)
        checkpoint.restore_rng(resumed.rng, trainer.batches, device)
        trainer.step, history = resumed.step, [CurveRow(**row) for row in resumed.history]
        earlier = earlier_time(outputs, fingerprint, resumed.step, log)
        if earlier is not None:
            wall, started_at = earlier.wall_seconds, earlier.started
    if not history:
        history.append(evaluation(0))  # the loss before any training: ln(vocab) for a uniform guess

    bar = tqdm(total=cfg.max_iters, initial=trainer.step, disable=not progress,
               desc="attention" if config.attention else "no attention",
               unit="it", mininterval=1.0, file=sys.stderr)
    stopwatch, started, start_step = Stopwatch(wall), time.perf_counter(), trainer.step

    def write_log(entry: RunLog) -> RunLog:
        if outputs.run_log is not None:
            RUN_LOG.write(outputs.run_log, entry)
        return entry

    def after_step(t: loop.Trainer) -> None:
        bar.update(1)
        last = t.step == cfg.max_iters
        if t.step % cfg.eval_interval == 0 or last:
            history.append(evaluation(t.step))
        if t.step % PROGRESS_EVERY == 0 or last:
            elapsed = time.perf_counter() - started
            bar.set_postfix(loss=f"{t.loss.item():.3f}", val=f"{history[-1].val_loss:.3f}",
                            tok_s=f"{(t.step - start_step) * tokens_per_step / max(elapsed, 1e-9):,.0f}",
                            refresh=False)
        if t.step % cfg.checkpoint_interval == 0 or last:
            checkpoint.save(outputs.model, checkpoint.Checkpoint(
                record=asdict(record), fingerprint=fingerprint, config=config.to_dict(),
                vocab=corpus.vocab.chars, model={k: v.cpu() for k, v in model.state_dict().items()},
                optimizer=t.optimizer.state_dict(), step=t.step, history=[asdict(row) for row in history],
                rng=checkpoint.rng_state(t.batches, device)))
            write_log(log_entry(fingerprint, t.step, tokens_per_step, stopwatch.lap(), started_at, finished=False))
            log(f"checkpoint: step {t.step} saved to {outputs.model}")

    trainer.run(after_step)
    bar.close()
    wall = stopwatch.lap()
    results = results_of(history, trainer.step, tokens_per_step, record.parameters)
    sample_text = sample(model, corpus.vocab, cfg, device)  # sets eval mode, which the maps are read in
    maps = attention_maps(model, corpus, device) if outputs.attention is not None else None
    write_outputs(outputs, replace(record, results=results), Curve(history), sample_text, maps)
    finished = log_entry(fingerprint, trainer.step, tokens_per_step, wall, started_at, finished=True)
    return Trained(results, write_log(finished))  # finished once every output is written


def write_outputs(outputs: Outputs, record: RunRecord, curve: Curve, sample_text: str,
                  maps: AttentionMaps | None) -> None:
    """Every output of a finished run (``record`` with its results), each in its mha.artifacts format."""
    artifacts.write_metrics(outputs.metrics, record.results)
    RUN_RECORD.write(outputs.config, record)
    artifacts.write_curve(outputs.plot, curve)
    artifacts.write_sample(outputs.sample, sample_text)
    if maps is not None:
        ATTENTION_MAPS.write(outputs.attention, maps)


def sample(model: GPT, vocab: CharVocab, cfg: TrainConfig, device: torch.device) -> str:
    """sample_chars characters after the fixed prompt, from a generator seeded with train.seed."""
    generator = torch.Generator(device=device).manual_seed(cfg.seed)
    prompt = torch.tensor(vocab.encode(cfg.sample_prompt), device=device)[None]  # (1, P)
    model.eval()
    out = model.generate(prompt, cfg.sample_chars, temperature=1.0, generator=generator)  # (1, P + n)
    return vocab.decode(out[0].tolist())


def excerpt_start(val_text: str, length: int) -> int:
    """The first speaker's line of the validation text (after a blank line), so the excerpt reads well."""
    start = val_text.find("\n\n") + 2
    return start if 0 < start <= len(val_text) - length else 0


def attention_maps(model: GPT, corpus: Corpus, device: torch.device) -> AttentionMaps:
    length = min(EXCERPT_CHARS, model.config.block_size)
    start = excerpt_start(corpus.val_text, length)
    excerpt = corpus.val_text[start : start + length]
    idx = torch.tensor(corpus.vocab.encode(excerpt), device=device)[None]  # (1, T)
    weights = model.attention_weights(idx)[:, 0]  # (L, H, T, T)
    return AttentionMaps(excerpt=excerpt, tokens=list(excerpt), n_layer=model.config.n_layer,
                         n_head=model.config.n_head, weights=weights.double().cpu().tolist())
