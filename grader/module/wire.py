"""What the driver in the sandbox (``harness.py``) answers, read as hostile data.

Every byte that comes back from the child may have been forged by the submission, which can reach the
driver. A description arrives as a JSON answer (``grader/sandbox/inside/wire.py``: parsed by the session from
at most ``MAX_JSON`` bytes); here every field's type and range is checked, the number of parameters and of dimensions
capped, and a shape never used to allocate anything (``Param.entries`` says how large it is; the grader
allocates only under ``MAX_FILL``). Anything else is ``None``, which the caller words as a reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_PARAMS = 512  # as harness.MAX_PARAMS: more means the child did not answer as the driver does
MAX_NAME = 200
MAX_DIMS = 8
MAX_DIM = 1 << 24  # one dimension of a parameter
MASK_ARGS = ("attn_mask", "key_padding_mask", "is_causal")  # as harness.MASK_ARGS
MAX_FILL = 1 << 16  # the largest parameter the grader fills with a value for a module (d_model 16 needs 768)


@dataclass(frozen=True)
class Param:
    name: str
    shape: tuple[int, ...]
    owner: str  # class name of the module holding it: Linear, Conv1D, MultiheadAttention, ...

    @property
    def entries(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class ModuleDescription:
    params: tuple[Param, ...]
    init: tuple[str, ...]  # the constructor's parameter names
    masks: tuple[str, ...] = ()  # which of MASK_ARGS it gives an nn.MultiheadAttention inside it


@dataclass(frozen=True)
class ModelParam:
    name: str
    shape: tuple[int, ...]
    trainable: bool
    used: bool  # a backward pass gave it a gradient

    @property
    def entries(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class ModelDescription:
    params: tuple[ModelParam, ...]
    attention_called: int  # modules of the student's attention class that its forward called


def _name(value) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= MAX_NAME and value.isprintable() else None


def _shape(value) -> tuple[int, ...] | None:
    if not isinstance(value, list) or len(value) > MAX_DIMS:
        return None
    if not all(type(s) is int and 0 <= s <= MAX_DIM for s in value):
        return None
    return tuple(value)


def module_description(info) -> ModuleDescription | None:
    """The description a JSON answer's value holds (an outcome's ``value``), or None."""
    if not isinstance(info, dict) or not isinstance(info.get("params"), list) or len(info["params"]) > MAX_PARAMS:
        return None
    params = []
    for item in info["params"]:
        if not (isinstance(item, list) and len(item) == 3):
            return None
        name, shape, owner = _name(item[0]), _shape(item[1]), item[2]
        if name is None or shape is None or not isinstance(owner, str) or len(owner) > MAX_NAME:
            return None
        params.append(Param(name, shape, owner))
    init = info.get("init")
    if not isinstance(init, list) or len(init) > 20 or not all(_name(n) for n in init):
        return None
    masks = info.get("masks", [])
    if not isinstance(masks, list) or not all(isinstance(n, str) and n in MASK_ARGS for n in masks):
        return None
    return ModuleDescription(tuple(params), tuple(init), tuple(sorted(set(masks))))


def model_description(info) -> ModelDescription | None:
    """The description a JSON answer's value holds (an outcome's ``value``), or None."""
    if not isinstance(info, dict) or not isinstance(info.get("params"), list) or len(info["params"]) > MAX_PARAMS:
        return None
    called = info.get("attention_called")
    if type(called) is not int or not 0 <= called <= MAX_PARAMS:
        return None
    params = []
    for item in info["params"]:
        if not (isinstance(item, list) and len(item) == 4):
            return None
        name, shape, trainable, used = _name(item[0]), _shape(item[1]), item[2], item[3]
        if name is None or shape is None or type(trainable) is not bool or type(used) is not bool:
            return None
        params.append(ModelParam(name, shape, trainable, used))
    return ModelDescription(tuple(params), called)
