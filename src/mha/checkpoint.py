"""A training run's checkpoint: saved atomically, resumed only when the run it came from is this one.

A checkpoint holds the weights (and their moving average, when the run keeps one), the optimizer, the step, the
RNG states, the learning curve so far and the run record (models/X.json) of the run that wrote it: nothing of the
machine or the clock, so that the same run writes the same bytes anywhere (its training time so far is in its run
log, mha.artifacts.runlog). Its fingerprint covers every setting and line of code that changes the numbers, and the
data; a checkpoint whose fingerprint differs is not resumed, and `difference` says why.
"""

from __future__ import annotations

import hashlib
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from mha.files import atomic_write_bytes
from mha.training.trainer import Trainer

# The sections of the run record that change the numbers (with the data's sha256).
FINGERPRINT_KEYS = ("model", "train", "device", "denormals", "code")


def code_hashes(*modules: Any) -> dict[str, str]:
    """sha256 of each module's file, by file name: a checkpoint from other code is not resumed."""
    return {Path(m.__file__).name: hashlib.sha256(Path(m.__file__).read_bytes()).hexdigest() for m in modules}


def _flatten(d: dict, prefix: str = "") -> dict:
    flat = {}
    for k, v in d.items():
        flat.update(_flatten(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return flat


def _fingerprinted(record: dict) -> dict:
    """The flattened settings a checkpoint must match; a key the record lacks is None."""
    flat = _flatten({k: record.get(k) for k in FINGERPRINT_KEYS})
    flat["data.sha256"] = (record.get("data") or {}).get("sha256")
    return flat


def fingerprint(record: dict) -> str:
    """``record``: a run record as a dict (asdict of mha.artifacts.run.RunRecord)."""
    return hashlib.sha256(repr(sorted(_fingerprinted(record).items())).encode()).hexdigest()


def difference(old: dict, new: dict) -> str:
    """What changed from the run record ``old`` to ``new``, e.g. 'train.lr 0.01 -> 0.02, code.model.py changed'."""
    a, b = _fingerprinted(old), _fingerprinted(new)
    changed = [
        f"{k} changed" if k.startswith("code.") else f"{k} {a.get(k)!r} -> {b.get(k)!r}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]
    return ", ".join(changed) or "the fingerprint differs"


@dataclass
class Checkpoint:
    record: dict  # the run record of the run that wrote it, as a dict (its model: the GPTConfig)
    vocab: str  # mha.data.CharVocab.chars
    # model, optimizer, step, rng and average: mha.training.trainer.Trainer.state_dict()
    model: dict  # state_dict, on the CPU
    optimizer: dict  # state_dict
    step: int
    history: list[dict]  # the learning curve's rows so far (asdict of mha.artifacts.run.CurveRow)
    rng: dict  # "batches": the batch generator's state, "torch" and "cuda": the global RNGs' (cuda: None on a CPU)
    average: dict | None = None  # the weights' moving average (mha.training.average), state_dict; None: none kept


def canonical(value: Any) -> Any:
    """``value`` rebuilt with every string interned and no list, tuple or dict shared, so that equal checkpoints
    pickle to equal bytes. Pickle writes an object it has already written as a reference to it: a resumed run,
    whose optimizer's keys were read back from a file rather than taken from torch's source, would otherwise
    write the same values as other bytes, and DVC would see another checkpoint."""
    if type(value) is dict:
        return {canonical(k): canonical(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(canonical(v) for v in value)
    if type(value) is str:
        return sys.intern(value)
    return value


def save(path: Path, checkpoint: Checkpoint) -> None:
    buffer = io.BytesIO()
    torch.save(canonical({f.name: getattr(checkpoint, f.name) for f in fields(Checkpoint)}), buffer)
    atomic_write_bytes(path, buffer.getvalue())  # a kill -9 leaves the previous checkpoint intact


def read(path: Path) -> Checkpoint:
    """The checkpoint saved at ``path``, on the CPU; whatever torch.load raises for a file that is not one."""
    return Checkpoint(**torch.load(path, map_location="cpu", weights_only=False))


def load(path: Path, record: dict, log: Callable[[str], None]) -> Checkpoint | None:
    """The checkpoint at ``path`` if it was written by the run ``record`` describes, else None (saying why)."""
    if not path.exists():
        return None
    try:
        checkpoint = read(path)
    except Exception as exc:  # noqa: BLE001 - a file from elsewhere, or from an older format
        log(f"not resuming from {path}: cannot read it ({type(exc).__name__}: {exc}); starting fresh")
        return None
    if fingerprint(checkpoint.record) != fingerprint(record):
        log(f"not resuming from {path}: its config, data or code differ "
            f"({difference(checkpoint.record, record)}); starting fresh")
        return None
    log(f"resuming from {path} at step {checkpoint.step} of {record['train']['max_iters']}")
    return checkpoint


def save_run(path: Path, record: dict, vocab: str, trainer: Trainer, history: list[dict]) -> None:
    """Checkpoint a run after ``trainer.step`` steps, with its learning curve so far."""
    save(path, Checkpoint(record=record, vocab=vocab, history=history, **trainer.state_dict()))


def resume(path: Path, record: dict, trainer: Trainer, log: Callable[[str], None]) -> list[dict]:
    """Load the checkpoint at ``path`` into ``trainer`` (weights, optimizer, step and RNGs) if the run ``record``
    describes wrote it; its learning curve so far, or [] when there is none to resume."""
    saved = load(path, record, log)
    if saved is None:
        return []
    trainer.load_state_dict(vars(saved))  # the fields Trainer.state_dict() wrote
    return saved.history
