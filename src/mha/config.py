"""A training run's whole configuration, resolved once from params.yaml and passed on as dataclasses.

`resolve(params)` turns the `data:`, `model:` and `train:` sections into a RunConfig, refusing unknown
or missing keys, wrong types and bad values with a message naming the key. The values live in params.yaml
alone: TrainConfig has no defaults that could disagree with it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from mha.data import DataConfig
from mha.errors import ERRORS
from mha.messages import MessageError
from mha.model import GPTConfig, check_types

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

    def __post_init__(self) -> None:
        check_types(self, "train")
        for name in ("batch_size", "max_iters", "lr", "muon_lr", "eval_interval", "eval_iters", "threads",
                     "checkpoint_interval"):
            if getattr(self, name) <= 0:
                raise ERRORS.error("config.not_positive", setting=f"train.{name}", value=repr(getattr(self, name)))
        for name in ("warmup_iters", "min_lr", "weight_decay", "grad_clip", "sample_chars"):
            if getattr(self, name) < 0:
                raise ERRORS.error("config.negative", setting=f"train.{name}", value=repr(getattr(self, name)))
        if self.min_lr > self.lr:
            raise ERRORS.error("config.min_lr_above_lr", lr=repr(self.lr), value=repr(self.min_lr))
        for name, allowed in (("optimizer", OPTIMIZERS), ("device", DEVICES), ("precision", PRECISIONS)):
            if getattr(self, name) not in allowed:
                raise ERRORS.error("config.not_one_of", setting=f"train.{name}", allowed=", ".join(allowed),
                                   value=repr(getattr(self, name)))
        if not self.sample_prompt:
            raise ERRORS.error("config.empty_prompt")


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


def _section(params: dict, name: str, allowed: tuple[str, ...]) -> dict:
    values = params.get(name)
    if not isinstance(values, dict):
        raise ERRORS.error("config.no_section", section=name, value=repr(values))
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise ERRORS.error("config.unknown_key", setting=f"{name}.{unknown[0]}", allowed=", ".join(allowed))
    return values


def resolve(params: dict, attention: bool = True) -> RunConfig:
    """Validate params.yaml's data:, model: and train: sections. Raises ValueError naming the offending key."""
    if not isinstance(params, dict):
        raise ERRORS.error("config.not_a_mapping", type=type(params).__name__)
    model_values = _section(params, "model", MODEL_KEYS)
    train_values = _section(params, "train", TRAIN_KEYS)
    # data: is shared with fetch_data (url, sha256); a run reads only its own keys from it
    data_values = {k: v for k, v in (params.get("data") or {}).items() if k in DATA_KEYS}
    for section, values, needed in (("model", model_values, MODEL_KEYS), ("train", train_values, TRAIN_KEYS)):
        missing = sorted(set(needed) - set(values))
        if missing:
            raise ERRORS.error("config.missing_key", setting=f"{section}.{missing[0]}", section=section,
                               needed=", ".join(needed))
    try:
        model = GPTConfig(attention=attention, **model_values)
    except MessageError as exc:  # named as params.yaml names it
        values = exc.message.values
        setting = values["setting"].replace("GPTConfig.", "model.")
        raise ERRORS.error(exc.message.key, **{**values, "setting": setting}) from None
    return RunConfig(data=DataConfig(**data_values), model=model, train=TrainConfig(**train_values))
