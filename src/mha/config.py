"""A training run's whole configuration, resolved from params.yaml's data:, model: and train: sections.

`resolve(params)` checks those sections' keys (mha.params: every one required, none unknown), then their
types and values, raising a ParamsError that names the setting, and returns a RunConfig. The values live
in params.yaml alone: these dataclasses have no defaults that could disagree with it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from mha.data import DataConfig
from mha.model import GPTConfig, check_types
from mha.params import SECTIONS, ParamsError, check_keys, section

DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("fp32", "bf16")  # bf16: the forward under torch.autocast(bfloat16), on CUDA only
OPTIMIZERS = ("adamw", "muon")  # muon: torch.optim.Muon on the hidden matrices, AdamW on the rest (mha.loop)


@dataclass
class TrainConfig:
    batch_size: int
    max_iters: int
    optimizer: str  # one of OPTIMIZERS: adamw, or muon (Muon on the hidden matrices, AdamW on the rest)
    lr: float  # AdamW's peak learning rate, reached after warmup_iters
    muon_lr: float  # Muon's peak learning rate (optimizer: muon)
    warmup_iters: int
    min_lr: float  # AdamW's lr at max_iters, after a cosine decay; Muon's decays in the same ratio
    weight_decay: float  # on matrices only, not on biases or LayerNorm
    grad_clip: float  # max global gradient norm; 0 turns clipping off
    ema: float  # decay of the moving average of the weights that are evaluated, sampled and kept (mha.loop); 0: none
    eval_interval: int
    eval_iters: int  # fixed batches of train and of validation text per evaluation
    seed: int
    threads: int  # torch.set_num_threads; a different count changes the floating-point results
    device: str  # cpu, cuda or auto (cuda when available)
    sample_chars: int
    sample_prompt: str
    checkpoint_interval: int
    precision: str  # fp32, or bf16: autocast to bfloat16 on CUDA; refused on CPU (see train.check_device)
    compile: bool  # torch.compile the training forward (CPU or CUDA); evaluation stays eager
    cuda_graph: bool  # record the step once as a CUDA graph and replay it (mha.cuda_graph); refused on a CPU

    def __post_init__(self) -> None:
        check_types(self, "train")
        for name in ("batch_size", "max_iters", "lr", "muon_lr", "eval_interval", "eval_iters", "threads",
                     "checkpoint_interval"):
            if getattr(self, name) <= 0:
                raise ParamsError(f"train.{name} must be positive, got {getattr(self, name)!r}")
        for name in ("warmup_iters", "min_lr", "weight_decay", "grad_clip", "sample_chars"):
            if getattr(self, name) < 0:
                raise ParamsError(f"train.{name} must be zero or positive, got {getattr(self, name)!r}")
        if not 0 <= self.ema < 1:
            raise ParamsError(f"train.ema must be at least 0 and below 1 (0 turns the average off), got {self.ema!r}")
        if self.min_lr > self.lr:
            raise ParamsError(f"train.min_lr must not exceed train.lr ({self.lr!r}), got {self.min_lr!r}")
        for name, allowed in (("optimizer", OPTIMIZERS), ("device", DEVICES), ("precision", PRECISIONS)):
            if getattr(self, name) not in allowed:
                raise ParamsError(f"train.{name} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        if not self.sample_prompt:
            raise ParamsError("train.sample_prompt must not be empty (generation needs at least one character)")


# The corpus sets vocab_size and the stage's --attention sets attention; params.yaml sets the rest.
MODEL_KEYS = tuple(f.name for f in fields(GPTConfig) if f.name not in ("vocab_size", "attention"))
TRAIN_KEYS = tuple(f.name for f in fields(TrainConfig))
DATA_KEYS = tuple(f.name for f in fields(DataConfig))


@dataclass(frozen=True)
class RunConfig:
    data: DataConfig
    model: GPTConfig  # vocab_size is GPTConfig's default until the corpus is known (for_vocab)
    train: TrainConfig

    def for_vocab(self, vocab_size: int) -> GPTConfig:
        """The model's config for a corpus of ``vocab_size`` characters."""
        return replace(self.model, vocab_size=vocab_size)


def resolve(params: dict, attention: bool = True) -> RunConfig:
    """The RunConfig of params.yaml's data:, model: and train: sections (other sections are not read)."""
    data, model, train = (section(params, name) for name in ("data", "model", "train"))
    for name, values in (("data", data), ("model", model), ("train", train)):
        check_keys(values, name, SECTIONS[name]())  # the one schema of each section, mha.params'
    try:
        model_config = GPTConfig(attention=attention, **model)
    except ValueError as exc:  # named as params.yaml names it
        raise ParamsError(str(exc).replace("GPTConfig.", "model.")) from None
    return RunConfig(data=DataConfig(**{k: data[k] for k in DATA_KEYS}), model=model_config,
                     train=TrainConfig(**train))


def model_config(params: dict, **overrides) -> GPTConfig:
    """The model of params.yaml's model: section with ``overrides`` (a benchmark's or a test's variant)."""
    values = section(params, "model")
    check_keys(values, "model", MODEL_KEYS)
    return GPTConfig(**{**values, **overrides})
