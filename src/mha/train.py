"""Train mha.model.GPT on a character corpus: seeded, resumable, with fixed evaluation batches.

`train(run, corpus, outputs)` builds the model and optimizer for a resolved RunConfig (mha.schema),
resumes from a matching checkpoint (mha.checkpoint), runs mha.training's trainer with one callback that
evaluates every `eval_interval` steps on batches drawn once from a fixed seed and checkpoints every
`checkpoint_interval` steps, and then writes every output (`write_outputs`, in the formats of
mha.artifacts). A run resumed after a kill ends with exactly the numbers of an uninterrupted one, and with
byte-identical outputs: its wall time, speed and machine go only into its run log (mha.artifacts.runlog),
written beside each checkpoint and at the end.

The device picks the attention kernel (mha.model.KERNEL_FOR_DEVICE). `train.precision: bf16` runs the
training forward under bfloat16 autocast (CUDA only; refused on a CPU), `train.compile: true` runs
it through torch.compile (the first step's time, compilation included, goes into the run log) and
`train.cuda_graph: true` replays the step as one CUDA graph (mha.training.cuda_graph; CUDA only, refused on a CPU);
evaluation, sampling and the heat-maps stay eager in fp32. All are in the run record, and a checkpoint made
with other settings is not resumed.

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

from mha import checkpoint, machine
from mha import model as model_module
from mha.artifacts import run as artifacts
from mha.artifacts.attention import ATTENTION_MAPS, AttentionMaps
from mha.artifacts.layout import RunFiles
from mha.artifacts.run import RUN_RECORD, Curve, CurveRow, RunRecord, RunResults
from mha.artifacts.runlog import RUN_LOG, RunLog, logged_at, read_run_log
from mha.data import CharVocab, split_text
from mha.model import GPT, KERNEL_FOR_DEVICE
from mha.params import ParamsError
from mha.schema import DataConfig, GPTConfig, RunConfig, TrainConfig
from mha.training import average, optimizers, schedule
from mha.training import trainer as trainer_module
from mha.training.schedule import lr_at
from mha.training.trainer import Trainer, get_batch

EXCERPT_CHARS = 64  # characters of validation text shown in the attention heat-maps


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
class Trained:
    """A finished run: its results, the same on every machine, and its log, this machine's."""

    results: RunResults
    log: RunLog
    model: GPT  # in eval mode: the trained weights at the last step, or their moving average (train.ema)


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
        raise ParamsError("train.device is 'cuda' but PyTorch sees no CUDA device here; use cpu or auto")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def check_device(cfg: TrainConfig, device: torch.device) -> None:
    """Refuse settings the resolved device cannot honour, naming the key."""
    if cfg.precision == "bf16" and device.type != "cuda":
        raise ParamsError(f"train.precision is 'bf16' but this run is on {device.type}: bf16 autocast is for CUDA "
                          "only; use fp32 here")
    if cfg.cuda_graph and device.type != "cuda":
        raise ParamsError(f"train.cuda_graph is true but this run is on {device.type}: a CUDA graph needs a CUDA "
                          "device; use false here")


def check_block_size(config: GPTConfig, corpus: Corpus) -> None:
    if config.block_size >= len(corpus.val):
        raise ParamsError(f"model.block_size is {config.block_size!r} but the validation split has only "
                          f"{len(corpus.val)} characters; use a smaller block_size or a larger data.val_fraction")


def code_hashes() -> dict[str, str]:
    """The modules whose code changes the numbers: a checkpoint from other code is not resumed."""
    return checkpoint.code_hashes(model_module, trainer_module, optimizers, schedule, average, sys.modules[__name__])


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


def setup(cfg: TrainConfig) -> torch.device:
    """The device for ``cfg``, with this process set up for training on it; the stage scripts call it once,
    before train()."""
    device = resolve_device(cfg.device)
    check_device(cfg, device)
    if device.type == "cpu":
        machine.keep_freed_memory()  # faster steps, same numbers
    torch.set_num_threads(cfg.threads)
    return device


def results_of(history: list[CurveRow], steps: int, tokens_per_step: int, parameters: int) -> RunResults:
    return RunResults(
        best_val_loss=min(row.val_loss for row in history),
        final_val_loss=history[-1].val_loss,
        final_train_loss=history[-1].train_loss,
        iterations=steps,
        tokens_seen=steps * tokens_per_step,
        parameters=parameters,
    )


def validation_batches(corpus: Corpus, cfg: TrainConfig, block_size: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The validation batches every evaluation of a run reads: drawn once, from their own seed."""
    return fixed_batches(corpus.val, cfg, block_size, cfg.seed + 2)


class Evaluation:
    """The learning curve's row at a step, for the model the trainer keeps: the losses on batches drawn once,
    from their own seeds, so that every evaluation sees the same text."""

    def __init__(self, trainer: Trainer, corpus: Corpus):
        cfg, block_size = trainer.cfg, trainer.block_size
        self.model, self.cfg, self.device = trainer.evaluated, cfg, trainer.device
        self.tokens_per_step = trainer.tokens_per_step
        self.train_batches = fixed_batches(corpus.train, cfg, block_size, cfg.seed + 1)
        self.val_batches = validation_batches(corpus, cfg, block_size)

    def __call__(self, step: int) -> CurveRow:
        return CurveRow(step=step, tokens=step * self.tokens_per_step,
                        train_loss=evaluate(self.model, self.train_batches, self.device),
                        val_loss=evaluate(self.model, self.val_batches, self.device),
                        lr=lr_at(min(step, self.cfg.max_iters - 1), self.cfg))


class RunClock:
    """The run log (mha.artifacts.runlog): training time over every process that trained this run, counted from
    the log of the run a checkpoint resumes, and written beside every checkpoint and at the end."""

    def __init__(self, path: Path, fingerprint: str, tokens_per_step: int, log: Callable[[str], None]):
        self.path, self.fingerprint, self.tokens_per_step, self.log = path, fingerprint, tokens_per_step, log
        self.total, self.started, self._since = 0.0, logged_at(), time.perf_counter()
        self.compile_seconds: float | None = None  # FirstStep's, under train.compile

    def resume(self, step: int) -> None:
        """Count the time of the run resumed at ``step``; when its log is missing, another run's or of another
        step (the process was killed between a checkpoint and its log), say that it is not counted."""
        earlier = read_run_log(self.path)
        if earlier is None or (earlier.fingerprint, earlier.step) != (self.fingerprint, step):
            self.log(f"no run log of this run at step {step} in {self.path}: its time before this process is "
                     "not counted in its wall time")
            return
        self.total, self.started = earlier.wall_seconds, earlier.started

    def write(self, steps: int, finished: bool) -> RunLog:
        """The log after ``steps`` steps, with the time since the last write added, written to its file."""
        now = time.perf_counter()
        self.total, self._since = self.total + now - self._since, now
        entry = RunLog(fingerprint=self.fingerprint, step=steps, wall_seconds=round(self.total, 3),
                       tokens_per_second=round(steps * self.tokens_per_step / max(self.total, 1e-9), 1),
                       finished=finished, cpu=machine.cpu_model(), host=machine.host(), started=self.started,
                       written=logged_at(), compile_seconds=self.compile_seconds)
        RUN_LOG.write(self.path, entry)
        return entry


class FirstStep:
    """Under train.compile, the time of the first step this process takes, compilation included (the forward's and
    its backward's): said in the log and kept in the run log (RunLog.compile_seconds)."""

    def __init__(self, trainer: Trainer, log: Callable[[str], None]):
        self.trainer, self.log, self.started = trainer, log, time.perf_counter()
        self.pending = trainer.cfg.compile

    def done(self, clock: RunClock) -> None:
        if not self.pending:
            return
        self.pending = False
        if self.trainer.loss is not None:
            self.trainer.loss.item()  # waits for the step on a GPU, once: the time is the step's, not its launch's
        clock.compile_seconds = round(time.perf_counter() - self.started, 3)
        self.log(f"train.compile: the first step took {clock.compile_seconds:.1f} s, compiling the forward and "
                 "backward included")


def progress_bar(trainer: Trainer, attention: bool, enabled: bool) -> Callable[[CurveRow], None]:
    """A tqdm bar over the run's steps; the function it returns advances it by one step and closes it after the
    last, showing the last evaluation's losses and the speed after each evaluation. The step's own loss is not
    read: reading a device tensor makes the host wait for the step (mha.training.trainer), an evaluation waits
    anyway."""
    cfg, start_step, started = trainer.cfg, trainer.step, time.perf_counter()
    bar = tqdm(total=cfg.max_iters, initial=start_step, disable=not enabled, unit="it", mininterval=1.0,
               desc="attention" if attention else "no attention", file=sys.stderr)

    def advance(last_row: CurveRow) -> None:
        bar.update(1)
        if last_row.step == trainer.step:
            speed = (trainer.step - start_step) * trainer.tokens_per_step / max(time.perf_counter() - started, 1e-9)
            bar.set_postfix(loss=f"{last_row.train_loss:.3f}", val=f"{last_row.val_loss:.3f}",
                            tok_s=f"{speed:,.0f}", refresh=False)
        if trainer.step == cfg.max_iters:
            bar.close()

    return advance


def train(run: RunConfig, corpus: Corpus, files: RunFiles, device: torch.device, *, data_path: str = "",
          log: Callable[[str], None] = lambda line: print(line, file=sys.stderr), progress: bool = True) -> Trained:
    """Train (or resume) on ``device`` (from setup()), write every output and the run log; the results."""
    cfg, config = run.train, run.for_vocab(corpus.vocab.size)
    check_block_size(config, corpus)
    torch.manual_seed(cfg.seed)  # before GPT(): it draws the initial weights
    model = GPT(config).to(device).use_kernel(KERNEL_FOR_DEVICE[device.type])
    record = run_record(run, config, corpus, device, model.num_parameters(), data_path)
    RUN_RECORD.write(files.record, record)
    trainer = Trainer.for_run(model, cfg, corpus.train, device,
                                   forward=torch.compile(model) if cfg.compile else None)
    kept = trainer.evaluated  # the model evaluated, sampled and returned: the weights' average, if there is one
    evaluation = Evaluation(trainer, corpus)
    clock = RunClock(files.run_log, checkpoint.fingerprint(asdict(record)), trainer.tokens_per_step, log)
    history = [CurveRow(**row) for row in checkpoint.resume(files.model, asdict(record), trainer, log)]
    if history:
        clock.resume(trainer.step)
    else:
        history.append(evaluation(0))  # the loss before any training: ln(vocab) for a uniform guess
    advance = progress_bar(trainer, config.attention, progress)
    first_step = FirstStep(trainer, log)

    def after_step(t: Trainer) -> None:
        first_step.done(clock)
        if t.step % cfg.eval_interval == 0 or t.step == cfg.max_iters:
            history.append(evaluation(t.step))
        advance(history[-1])
        if t.step % cfg.checkpoint_interval == 0 or t.step == cfg.max_iters:
            checkpoint.save_run(files.model, asdict(record), corpus.vocab.chars, t, [asdict(r) for r in history])
            clock.write(t.step, finished=False)
            log(f"checkpoint: step {t.step} saved to {files.model}")

    trainer.run(after_step)
    results = results_of(history, trainer.step, trainer.tokens_per_step, record.parameters)
    sample_text = sample(kept, corpus.vocab, cfg, device)  # sets eval mode, which the maps are read in
    maps = attention_maps(kept, corpus, device) if files.attention is not None else None
    write_outputs(files, replace(record, results=results), Curve(history), sample_text, maps)
    return Trained(results, clock.write(trainer.step, finished=True), kept)  # once every output is written


def write_outputs(files: RunFiles, record: RunRecord, curve: Curve, sample_text: str,
                  maps: AttentionMaps | None) -> None:
    """Every output of a finished run (``record`` with its results), each in its mha.artifacts format."""
    artifacts.write_metrics(files.metrics, record.results)
    RUN_RECORD.write(files.record, record)
    artifacts.write_curve(files.plot, curve)
    artifacts.write_sample(files.sample, sample_text)
    if maps is not None:
        ATTENTION_MAPS.write(files.attention, maps)


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
