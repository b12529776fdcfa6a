"""Where the course's W_Q, W_K, W_V, W_O go in a student's module: the layouts public code uses.

A layout is recognised from the parameters alone (name, shape, the class of the module that holds
it), never from source. ``place`` returns, for every parameter it fills, the value to copy into it
(the course's per-head matrices arranged as that layout computes with them; every bias zero), or
``None`` with what was found when no layout fits. The course computes ``Q_i = X W_Q[i]`` with
W_Q[i] of shape (d_model, d_k) and ``Y = [head_1 | … | head_h] W_O``; ``nn.Linear`` computes
``x Wᵀ``, so a Linear's weight is the transpose of the matrix the course multiplies by.

Layouts (all heads' columns side by side in head order, as ``view(B, T, h, d_k)`` splits them):
- ``separate``: four Linears (or four bare (d_model, d_model) parameters, used as ``x @ W``) whose
  names say query/key/value/output: query, q_proj, W_q, wq, to_q, q_lin, ...; out_proj, proj,
  c_proj, o_proj, W_o, dense, fc_out, ...; or four Linears in one list (the Annotated Transformer's
  ``linears.0-3``);
- ``fused``: one (3·d_model, d_model) Linear for Q, K and V (nanoGPT's ``c_attn``, ``qkv``,
  ``in_proj``) and one output Linear;
- ``torch-mha``: a wrapped ``nn.MultiheadAttention`` (``in_proj_weight``, ``out_proj``);
- ``per-head``: a list of per-head modules with (d_k, d_model) query/key/value Linears (the
  lecture's ``Head``) and one output Linear (``proj``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

LAYOUTS = ("separate", "fused", "torch-mha", "per-head")

# The last part of a weight's module path that names each projection.
_ROLE_NAMES = {
    "q": {"query", "q", "q_proj", "w_q", "wq", "to_q", "q_lin", "q_linear", "linear_q", "queries", "w_query"},
    "k": {"key", "k", "k_proj", "w_k", "wk", "to_k", "k_lin", "k_linear", "linear_k", "keys", "w_key"},
    "v": {"value", "v", "v_proj", "w_v", "wv", "to_v", "v_lin", "v_linear", "linear_v", "values", "w_value"},
    "o": {"proj", "out_proj", "o_proj", "c_proj", "w_o", "wo", "to_out", "out_lin", "out_linear", "linear_out",
          "fc_out", "dense", "out", "output", "o", "projection", "w_out", "proj_out", "out_projection"},
}
_FUSED_NAMES = {"c_attn", "qkv", "qkv_proj", "in_proj", "w_qkv", "wqkv", "to_qkv", "attn", "query_key_value"}
_HEAD_LIST = re.compile(r"^(.*\.)?(\w+)\.(\d+)\.(\w+)\.weight$")  # heads.0.key.weight


@dataclass(frozen=True)
class Param:
    name: str
    shape: tuple[int, ...]
    owner: str  # class name of the module holding it: Linear, MultiheadAttention, ...


@dataclass(frozen=True)
class Placement:
    layout: str
    values: dict  # parameter name -> array of that parameter's shape


def _role(path: str) -> str | None:
    last = path.rsplit(".", 1)[-1].lower()
    for role, names in _ROLE_NAMES.items():
        if last in names:
            return role
    return None


def _weights(params: list[Param]) -> dict[str, Param]:
    """Linear weights by module path, and bare matrices by their own name."""
    found = {}
    for p in params:
        if p.name.endswith(".weight") and p.owner == "Linear":
            found[p.name[: -len(".weight")]] = p
        elif "." not in p.name and len(p.shape) == 2 and p.owner != "Linear":
            found[p.name] = p
    return found


def _fill(p: Param, course: np.ndarray, linear: bool = False) -> np.ndarray:
    """The value of parameter ``p`` that computes ``x @ course``: transposed for a Linear (or ``linear``)."""
    value = course.T if linear or p.owner == "Linear" or p.name.endswith(".weight") else course
    if value.shape != p.shape:
        raise _Mismatch
    return value


class _Mismatch(Exception):
    pass


def _zero_biases(params: list[Param], values: dict) -> dict:
    for p in params:
        is_bias = p.name.rsplit(".", 1)[-1] == "bias" or p.name.endswith("_bias")
        if is_bias and p.name not in values:
            values.setdefault(p.name, np.zeros(p.shape))
    return values


def _separate(params, W) -> dict | None:
    weights = _weights(params)
    by_role: dict[str, list[str]] = {}
    for path in weights:
        role = _role(path)
        if role:
            by_role.setdefault(role, []).append(path)
    if all(len(by_role.get(r, [])) == 1 for r in "qkvo"):
        paths = {r: by_role[r][0] for r in "qkvo"}
    else:  # the Annotated Transformer: four Linears in one list, q k v then o
        lists: dict[str, list[str]] = {}
        for path in weights:
            head, _, index = path.rpartition(".")
            if index.isdigit():
                lists.setdefault(head, []).append(path)
        four = [sorted(v, key=lambda s: int(s.rpartition(".")[2])) for v in lists.values() if len(v) == 4]
        if len(four) != 1:
            return None
        paths = dict(zip("qkvo", four[0], strict=True))
    course = {"q": W.q_cat, "k": W.k_cat, "v": W.v_cat, "o": W.o}
    return {weights[paths[r]].name: _fill(weights[paths[r]], course[r]) for r in "qkvo"}


def _fused(params, W) -> dict | None:
    weights = _weights(params)
    fused = [p for path, p in weights.items() if path.rsplit(".", 1)[-1].lower() in _FUSED_NAMES]
    out = [p for path, p in weights.items() if _role(path) == "o"]
    if len(fused) != 1 or len(out) != 1:
        return None
    qkv = np.concatenate([W.q_cat, W.k_cat, W.v_cat], axis=1)  # (d_model, 3·d_model)
    return {fused[0].name: _fill(fused[0], qkv), out[0].name: _fill(out[0], W.o)}


def _torch_mha(params, W) -> dict | None:
    ins = [p for p in params if p.name.endswith("in_proj_weight") and p.owner == "MultiheadAttention"]
    if len(ins) != 1:
        return None
    prefix = ins[0].name[: -len("in_proj_weight")]
    outs = [p for p in params if p.name == prefix + "out_proj.weight"]
    if len(outs) != 1:
        return None
    qkv = np.concatenate([W.q_cat, W.k_cat, W.v_cat], axis=1)  # (d_model, 3·d_model)
    return {ins[0].name: _fill(ins[0], qkv, linear=True), outs[0].name: _fill(outs[0], W.o)}


def _per_head(params, W) -> dict | None:
    per: dict[tuple[str, int], dict[str, Param]] = {}
    for p in params:
        m = _HEAD_LIST.match(p.name)
        if m and p.owner == "Linear":
            role = _role(m.group(4))
            if role in ("q", "k", "v"):
                per.setdefault(((m.group(1) or "") + m.group(2), int(m.group(3))), {})[role] = p
    lists = {key[0] for key in per}
    h = len(W.q)
    if len(lists) != 1 or sorted(i for _, i in per) != list(range(h)):
        return None
    values = {}
    for (_, i), roles in per.items():
        if set(roles) != {"q", "k", "v"}:
            return None
        for role, mats in (("q", W.q), ("k", W.k), ("v", W.v)):
            values[roles[role].name] = _fill(roles[role], mats[i])
    outs = [p for path, p in _weights(params).items() if _role(path) == "o" and not _HEAD_LIST.match(p.name)]
    if len(outs) != 1:
        return None
    values[outs[0].name] = _fill(outs[0], W.o)
    return values


@dataclass(frozen=True)
class CourseWeights:
    """The course's matrices: per head (d_model, d_k), and W_O (h·d_k, d_model)."""

    q: list
    k: list
    v: list
    o: np.ndarray

    @property
    def q_cat(self):
        return np.concatenate(self.q, axis=1)  # (d_model, h·d_k), head i in columns i·d_k …

    @property
    def k_cat(self):
        return np.concatenate(self.k, axis=1)

    @property
    def v_cat(self):
        return np.concatenate(self.v, axis=1)


def place(params: list[Param], weights: CourseWeights) -> Placement | None:
    """The first layout that fits every projection with the right shapes, or None."""
    for name, finder in (("torch-mha", _torch_mha), ("per-head", _per_head), ("fused", _fused),
                         ("separate", _separate)):
        try:
            values = finder(params, weights)
        except _Mismatch:
            continue
        if values is not None:
            return Placement(name, _zero_biases(params, values))
    return None
