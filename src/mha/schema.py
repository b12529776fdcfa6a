"""params.yaml's schema: every section's dataclass, its keys and the checks of its values, without torch.

Each section of params.yaml is a frozen-in-place dataclass here: `DataConfig` (data:, with fetch_data's
DATA_SOURCE_KEYS), `GPTConfig` (model:), `TrainConfig` (train:), `ReportConfig` (report:) and `LabConfig` (lab:).
A field's annotation is the type params.yaml must give it, and its metadata the rules its value must pass
(`Rule`s such as `positive`, `one_of(...)`: attrs' validators are the model); `check(config)` applies them, in
field order, after every field's type, and each section's own `check_together` follows for rules between two
fields. Every message is one line that names the key as params.yaml writes it (train.lr, lab.order.seed):
"<key> must be <what>, got <value>". The values live in params.yaml alone: no field holds a default for a key
of the file.

`load(path, *read)` reads the file (mha.params), checks it has exactly SECTIONS' sections and that the sections
``read`` have exactly their keys; `resolve(params)` turns data:, model: and train: into a training run's
RunConfig. Imports run one way: mha.params (YAML, the key rule, ParamsError) <- mha.schema <- everything that
reads a section (mha.model, mha.train, mha.lab, mha.report, the stages); asking for a section's keys imports
neither torch, matplotlib nor jinja2 (tests/mha/test_params.py).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from mha import messages
from mha.lab.scale import scale_statistics
from mha.params import ParamsError, check_keys, read, section, section_of

# --- validators: one rule, one message format ---


@dataclass(frozen=True)
class Rule:
    """A condition on one value and what it says when the value fails it: "<key> must be <requirement>"."""

    requirement: str
    holds: Callable[[Any], bool]

    def check(self, key: str, value: Any) -> None:
        if not self.holds(value):
            raise ParamsError(f"{key} must be {self.requirement}, got {value!r}")


_TYPES = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,)}


def check_type(key: str, kind: str, value: Any) -> None:
    """A ParamsError unless ``value`` is of the params.yaml type ``kind`` (int, float, str or bool)."""
    # bool is a subclass of int, but `n_layer: true` is a typo, not a count
    if (isinstance(value, bool) and kind != "bool") or not isinstance(value, _TYPES[kind]):
        raise ParamsError(f"{key} must be {kind}, got {value!r} ({type(value).__name__})")


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


positive = Rule("positive", lambda v: v > 0)
zero_or_positive = Rule("zero or positive", lambda v: v >= 0)
positive_integer = Rule("a positive integer", lambda v: is_int(v) and v >= 1)


def one_of(*allowed: str) -> Rule:
    return Rule(f"one of {', '.join(allowed)}", lambda v: v in allowed)


def rules(*checks: Rule, typed: bool = False) -> dict[str, Any]:
    """A field's metadata: the rules its value must pass, in order; ``typed``: they check its type too (in their
    own message), so `check` does not check it first."""
    return {"rules": checks, "typed": typed}


def check(config: Any) -> None:
    """Every field of the section's dataclass ``config``: each one's type (those params.yaml writes as int, float,
    str or bool, unless its rules check it), then each one's rules, then the section's `check_together`."""
    where = type(config).SECTION
    for f in fields(config):
        if f.type in _TYPES and not f.metadata.get("typed"):
            check_type(f"{where}.{f.name}", f.type, getattr(config, f.name))
    for f in fields(config):
        for rule in f.metadata.get("rules", ()):
            rule.check(f"{where}.{f.name}", getattr(config, f.name))
    config.check_together()


def keys(config: type) -> tuple[str, ...]:
    """A section dataclass's keys in params.yaml: its fields, less those set elsewhere (metadata "set_by")."""
    return tuple(f.name for f in fields(config) if "set_by" not in f.metadata)


# --- the sections ---


class Section:
    """What every section's dataclass does when it is built: `check` itself."""

    SECTION = ""  # its name in params.yaml, as its messages write it

    def __post_init__(self) -> None:
        check(self)

    def check_together(self) -> None:
        """Rules between two fields (none unless the section has some)."""

# data: is shared: fetch_data reads the source, a training run the split (DataConfig).
DATA_SOURCE_KEYS = ("url", "sha256")


@dataclass(frozen=True)
class DataConfig(Section):
    """The `data:` keys of params.yaml that shape a run (url and sha256 are fetch_data's)."""

    SECTION = "data"
    val_fraction: float = field(metadata=rules(Rule("a number between 0 and 1 (exclusive)",  # the last part
                                                    lambda v: is_number(v) and 0 < v < 1), typed=True))  # validates


POSITIONS = ("learned", "sinusoidal", "none")  # how position enters the residual stream (mha.model)


@dataclass
class GPTConfig(Section):
    """The model: params.yaml's model: section, the corpus's vocabulary size and the stage's --attention."""

    SECTION = "model"
    block_size: int = field(metadata=rules(positive_integer))  # the longest context (positions 0 … block_size-1)
    n_layer: int = field(metadata=rules(positive_integer))
    n_head: int = field(metadata=rules(positive_integer))
    n_embd: int = field(metadata=rules(positive_integer))  # d_model; each head has d_k = n_embd // n_head
    dropout: float = field(metadata=rules(Rule("in [0, 1)", lambda v: 0.0 <= v < 1.0)))
    scale_scores: bool  # False: scores are Q Kᵀ, without the course's 1/√d_k
    positions: str = field(metadata=rules(one_of(*POSITIONS)))
    # the corpus's, set by RunConfig.for_vocab once it is read
    vocab_size: int = field(default=65, metadata={"set_by": "the corpus", **rules(positive_integer)})
    # False: every block is only x + FFN(LN(x)), everything else identical; the stage's --attention sets it
    attention: bool = field(default=True, metadata={"set_by": "--attention"})

    def check_together(self) -> None:
        if self.n_embd % self.n_head:
            raise ParamsError(f"model.n_embd must be divisible by n_head, got n_embd={self.n_embd} and "
                              f"n_head={self.n_head} (allowed n_head: divisors of {self.n_embd})")

    def to_dict(self) -> dict:
        return asdict(self)


DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("fp32", "bf16")  # bf16: the forward under torch.autocast(bfloat16), on CUDA only
OPTIMIZERS = ("adamw", "muon")  # muon: torch.optim.Muon on the hidden matrices, AdamW on the rest
POSITIVE, ZERO_OR_POSITIVE = rules(positive), rules(zero_or_positive)


@dataclass
class TrainConfig(Section):
    """params.yaml's train: section."""

    SECTION = "train"
    batch_size: int = field(metadata=POSITIVE)
    max_iters: int = field(metadata=POSITIVE)
    optimizer: str = field(metadata=rules(one_of(*OPTIMIZERS)))  # adamw, or muon on the hidden matrices
    lr: float = field(metadata=POSITIVE)  # AdamW's peak learning rate, reached after warmup_iters
    muon_lr: float = field(metadata=POSITIVE)  # Muon's peak learning rate (optimizer: muon)
    warmup_iters: int = field(metadata=ZERO_OR_POSITIVE)
    min_lr: float = field(metadata=ZERO_OR_POSITIVE)  # AdamW's lr at max_iters after a cosine decay; Muon's alike
    weight_decay: float = field(metadata=ZERO_OR_POSITIVE)  # on matrices only, not on biases or LayerNorm
    grad_clip: float = field(metadata=ZERO_OR_POSITIVE)  # max global gradient norm; 0 turns clipping off
    # decay of the moving average of the weights that are evaluated, sampled and kept (mha.training.average); 0: none
    ema: float = field(metadata=rules(Rule("at least 0 and below 1 (0 turns the average off)", lambda v: 0 <= v < 1)))
    eval_interval: int = field(metadata=POSITIVE)
    eval_iters: int = field(metadata=POSITIVE)  # fixed batches of train and of validation text per evaluation
    seed: int
    threads: int = field(metadata=POSITIVE)  # torch.set_num_threads; another count changes the floating point
    device: str = field(metadata=rules(one_of(*DEVICES)))  # cpu, cuda or auto (cuda when available)
    sample_chars: int = field(metadata=ZERO_OR_POSITIVE)
    sample_prompt: str = field(metadata=rules(Rule("not empty (generation needs at least one character)", bool)))
    checkpoint_interval: int = field(metadata=POSITIVE)
    # fp32, or bf16: autocast to bfloat16 on CUDA; refused on CPU (see train.check_device)
    precision: str = field(metadata=rules(one_of(*PRECISIONS)))
    compile: bool  # torch.compile the training forward (CPU or CUDA); evaluation stays eager
    cuda_graph: bool  # record the step once as a CUDA graph and replay it (mha.training.cuda_graph); not on a CPU

    def check_together(self) -> None:
        if self.min_lr > self.lr:
            raise ParamsError(f"train.min_lr must not exceed train.lr ({self.lr!r}), got {self.min_lr!r}")


@dataclass(frozen=True)
class ReportConfig(Section):
    """params.yaml's report: section."""

    SECTION = "report"
    language: str = field(metadata=rules(typed=True))  # a language of mha.messages, checked by check_together
    bigram_k: float = field(metadata=rules(Rule("a positive number (add-k smoothing)",  # add-k smoothing of the
                                                lambda v: is_number(v) and v > 0), typed=True))  # baselines

    def check_together(self) -> None:
        try:
            messages.check_language(self.language, "report.language")  # "is 'fr'; allowed: en, pt", as elsewhere
        except ValueError as exc:
            raise ParamsError(str(exc)) from None


# The keys of train: that the lab's schedule replaces; the rest (batch, lr, device, ...) is the main run's.
SCHEDULE_KEYS = ("max_iters", "warmup_iters", "eval_interval", "checkpoint_interval")
# Every key of train: a lab run takes from the lab: section instead (the seed from lab.seeds).
LAB_TRAIN_KEYS = (*SCHEDULE_KEYS, "seed")
MIN_SEEDS = 2  # a spread needs two
# lab.scale holds the arguments of scale_statistics, every one (it checks their values itself).
SCALE_KEYS = tuple(inspect.signature(scale_statistics).parameters)
# lab.cost.lengths: at least this many, the slope "at long lengths" fitted over that many of the longest
COST_MIN_LENGTHS = 3


@dataclass(frozen=True)
class OrderSettings(Section):
    """`lab.order`: the windows of mha.lab.order.order_sensitivity (their length is model.block_size)."""

    SECTION = "lab.order"
    windows: int = field(metadata=rules(positive_integer, typed=True))
    seed: int = field(metadata=rules(Rule("an integer", is_int), typed=True))


def increasing_lengths(value: Any) -> bool:
    return (isinstance(value, list) and len(value) >= COST_MIN_LENGTHS and all(is_int(v) and v >= 1 for v in value)
            and value == sorted(set(value)))


@dataclass(frozen=True)
class CostSettings(Section):
    """`lab.cost`: mha.lab.measure_cost's lengths and repeats (the layer is model:'s, the device train:'s)."""

    SECTION = "lab.cost"
    lengths: list = field(metadata=rules(Rule(f"a list of at least {COST_MIN_LENGTHS} increasing positive integers",
                                              increasing_lengths), typed=True))
    batch: int = field(metadata=rules(positive_integer, typed=True))
    repeats: int = field(metadata=rules(positive_integer, typed=True))  # timed passes; the figure is their median
    seed: int = field(metadata=rules(Rule("an integer", is_int), typed=True))


@dataclass(frozen=True)
class LabConfig:
    """The `lab:` section: the controlled runs of mha.lab, each the main run with three changes (mha.lab.runs)."""

    SECTION = "lab"
    seeds: tuple[int, ...]  # each run is trained once with each, as train.seed
    schedule: Mapping[str, Any]  # train: key -> value, exactly SCHEDULE_KEYS
    runs: Mapping[str, Mapping[str, Any]]  # run name -> model: key -> value
    scale: Mapping[str, Any]  # the keyword arguments of mha.lab.scale.scale_statistics
    order: OrderSettings
    cost: CostSettings

    @classmethod
    def from_params(cls, params: Any) -> LabConfig:
        """The `lab:` section, every key (and every key of its nested mappings) checked by mha.params' rule."""
        lab = section(params, "lab")
        check_keys(lab, "lab", LAB_KEYS)
        seeds = lab["seeds"]
        if (not isinstance(seeds, list) or len(seeds) < MIN_SEEDS or not all(map(is_int, seeds))
                or len(set(seeds)) != len(seeds)):
            raise ParamsError(f"lab.seeds must be a list of at least {MIN_SEEDS} different integers (each run is "
                              f"trained once with each), got {seeds!r}")
        schedule = section(lab, "schedule")
        check_keys(schedule, "lab.schedule", SCHEDULE_KEYS)
        runs = section(lab, "runs")
        if not runs:
            raise ParamsError("lab.runs is empty; it needs at least one run (reference: {} is the default model)")
        for name in runs:
            check_keys(section(runs, name), f"lab.runs.{name}", MODEL_KEYS, required=False)
        scale = section(lab, "scale")
        check_keys(scale, "lab.scale", SCALE_KEYS)
        order = section(lab, "order")
        check_keys(order, "lab.order", ORDER_KEYS)
        cost = section(lab, "cost")
        check_keys(cost, "lab.cost", COST_KEYS)
        return cls(seeds=tuple(seeds), schedule=schedule, runs=runs, scale=scale, order=OrderSettings(**order),
                   cost=CostSettings(**cost))


# The corpus sets vocab_size and the stage's --attention sets attention; params.yaml sets the rest.
MODEL_KEYS = keys(GPTConfig)
TRAIN_KEYS = keys(TrainConfig)
DATA_KEYS = keys(DataConfig)
REPORT_KEYS = keys(ReportConfig)
LAB_KEYS = keys(LabConfig)
ORDER_KEYS = keys(OrderSettings)
COST_KEYS = keys(CostSettings)
# Every section of params.yaml, and its keys.
SECTIONS = {"data": (*DATA_SOURCE_KEYS, *DATA_KEYS), "model": MODEL_KEYS, "train": TRAIN_KEYS,
            "report": REPORT_KEYS, "lab": LAB_KEYS}


# --- reading the file ---


def load(path: str | Path, *read_sections: str) -> dict:
    """params.yaml, with exactly SECTIONS' sections, and every key of the sections ``read_sections`` checked."""
    return check_sections(read(path), read_sections, Path(path).name)


def check_sections(params: Any, read_sections: tuple[str, ...] | list[str] = tuple(SECTIONS),
                   name: str = "params.yaml") -> dict:
    """``params`` if it has exactly SECTIONS' sections and the sections ``read_sections`` exactly their keys;
    else a ParamsError naming the first missing or unknown one."""
    section_of(params, SECTIONS, name)
    for key in read_sections:
        check_keys(section(params, key), key, SECTIONS[key])
    return params


def report_config(params: dict) -> ReportConfig:
    """The `report` section, every key required and checked."""
    values = section(params, "report")
    check_keys(values, "report", REPORT_KEYS)
    return ReportConfig(**values)


@dataclass(frozen=True)
class RunConfig:
    """A training run's whole configuration: params.yaml's data:, model: and train: sections."""

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
        check_keys(values, name, SECTIONS[name])
    return RunConfig(data=DataConfig(**{k: data[k] for k in DATA_KEYS}), model=GPTConfig(attention=attention, **model),
                     train=TrainConfig(**train))


def model_config(params: dict, **overrides) -> GPTConfig:
    """The model of params.yaml's model: section with ``overrides`` (a benchmark's or a test's variant)."""
    values = section(params, "model")
    check_keys(values, "model", MODEL_KEYS)
    return GPTConfig(**{**values, **overrides})
