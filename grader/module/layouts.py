"""Where the course's W_Q, W_K, W_V, W_O may go in a student's module: candidate placements, chosen by behaviour.

A module's parameters (names, shapes, the class of the module holding each, from ``wire``) give a few
candidate placements; names are a hint for the order, never a requirement. The grader runs every
candidate through the student's own forward and keeps the one whose output is the course's (``checks``):
so a fused projection's block order (``[q | k | v]``, or per head ``[q_1 k_1 v_1 | q_2 …]`` as GPT-NeoX),
a bare square matrix used as ``x @ W`` or as ``x @ W.T``, and separate projections under any names are
told apart by what they compute. The course computes ``Q_i = X W_Q[i]`` with W_Q[i] of shape
(d_model, d_k) and ``Y = [head_1 | … | head_h] W_O``; ``nn.Linear`` computes ``x Wᵀ``, so a Linear's
weight is the transpose of the matrix the course multiplies by; GPT-2's ``Conv1D`` stores (in, out).

Projections recognised (each a 2-D parameter whose input side is d_model):
- ``fused``: one with 3·d_model outputs (``c_attn``, ``qkv``, ``query_key_value``, ``in_proj_weight``) and an
  output projection;
- ``kv``: one with d_model outputs for Q, one with 2·d_model for K and V (``to_q``, ``to_kv``) and an output;
- ``separate``: four with d_model outputs (names such as ``q_proj``, ``tokeys``, ``c_v``, ``to_out.0``, else
  the order they were created in: Q, K, V, then the output);
- ``per-head``: h groups of three with d_k outputs (the lecture's ``Head``) and an output projection.
Every parameter whose name says bias is set to zero. A module with no output projection (only Q, K and V found)
gets placements without W_O (``output=False``), so that its forward can still be judged, and the slip named.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

import numpy as np

from grader.module.wire import MAX_FILL, Param

LAYOUTS = ("fused", "kv", "separate", "per-head")
MAX_CANDIDATES = 12


class TooLarge(Exception):
    """A parameter the grader would have to fill is larger than it allocates for a module."""

    def __init__(self, param: Param):
        super().__init__(param.name)
        self.param = param


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


@dataclass(frozen=True)
class Placement:
    layout: str
    values: dict  # parameter name -> array of that parameter's shape
    roles: dict = field(default_factory=dict)  # "q", "k", "v", "o" -> the parameters given that matrix


@dataclass(frozen=True)
class _Projection:
    param: Param
    transposed: bool  # True: used as x @ Wᵀ (nn.Linear's (out, in)); False: x @ W ((in, out), Conv1D)
    outputs: int


def _orientations(p: Param, d_model: int) -> list[bool]:
    """How a 2-D parameter may multiply an input of d_model features: transposed or not."""
    rows, cols = p.shape
    if p.owner.endswith("Linear") and p.name.endswith("weight") or p.name.endswith("in_proj_weight"):
        return [True] if cols == d_model else []
    if p.owner == "Conv1D":
        return [False] if rows == d_model else []
    return [o for o, fits in ((False, rows == d_model), (True, cols == d_model)) if fits]


_ROLE_TOKENS = {
    "q": re.compile(r"^(q|wq|qw|query|queries|toquer(y|ies)|q(lin(ear)?|proj|fc|layer|net|dense|w))$"),
    "k": re.compile(r"^(k|wk|kw|key|keys|tokeys?|k(lin(ear)?|proj|fc|layer|net|dense|w))$"),
    "v": re.compile(r"^(v|wv|vw|value|values|tovalues?|v(lin(ear)?|proj|fc|layer|net|dense|w))$"),
    "o": re.compile(r"^(o|wo|ow|out|output|outputs|proj|projection|dense|fc|unifyheads?|merge|o(lin(ear)?|proj|fc))$"),
}


def _role(name: str) -> str | None:
    """The projection a parameter's path names, read from the innermost module outwards (``to_out.0``: the
    output; ``heads.3.key``: K), each part split at underscores (``c_q``, ``q_proj``, ``W_o``)."""
    parts = name.lower().split(".")[:-1] or [name.lower()]
    for part in reversed(parts):
        tokens = [t for t in re.split(r"[_\-]", part) if t and not t.isdigit()]
        found = {role for role, pattern in _ROLE_TOKENS.items() for t in tokens if pattern.match(t)}
        if len(found) == 1:
            return found.pop()
        if found:  # q_proj holds q and proj: the projection's own letter wins
            return next(r for r in "qkv" if r in found) if found & set("qkv") else None
    return None


def _head_order(W: CourseWeights, roles: str, interleaved: bool) -> np.ndarray:
    """The course's matrices for ``roles`` (e.g. "qkv"), side by side: in blocks, or per head."""
    mats = {"q": W.q, "k": W.k, "v": W.v}
    if interleaved:
        return np.concatenate([mats[r][i] for i in range(len(W.q)) for r in roles], axis=1)
    return np.concatenate([np.concatenate(mats[r], axis=1) for r in roles], axis=1)  # (d_model, n·d_model)


def _value(proj: _Projection, course: np.ndarray) -> np.ndarray:
    value = course.T if proj.transposed else course
    if value.shape != proj.param.shape:
        raise ValueError("shape")
    return value


def _assign(projections: list[_Projection], roles: str) -> list[dict[str, _Projection]]:
    """Ways of giving ``roles`` to ``projections`` (as many): by the names where they name every role, and by
    the order the module created them."""
    ways = []
    named = {_role(p.param.name): p for p in projections}
    if set(named) == set(roles) and len(named) == len(projections):
        ways.append({r: named[r] for r in roles})
    ways.append(dict(zip(roles, projections, strict=True)))
    if set(named) - {None} and len(projections) == len(roles):  # a partial hint: keep the named ones in place
        rest = [p for p in projections if _role(p.param.name) not in roles]
        free = [r for r in roles if r not in named]
        if len(rest) == len(free):
            for order in itertools.permutations(rest):
                ways.append({**{r: named[r] for r in roles if r in named}, **dict(zip(free, order, strict=True))})
    unique = []
    for way in ways:
        if way not in unique:
            unique.append(way)
    return unique


def _output_last(projections: list[_Projection]) -> list[_Projection]:
    """The output projection is the one named so, else the last one created."""
    named = [p for p in projections if _role(p.param.name) == "o"]
    return named[:1] or projections[-1:]


def candidates(params: tuple[Param, ...] | list[Param], W: CourseWeights, output: bool = True) -> list[Placement]:
    """Every placement the parameters allow, most likely first (at most ``MAX_CANDIDATES``); raises
    ``TooLarge`` when a parameter to fill is larger than ``MAX_FILL``. ``output=False``: placements of W_Q, W_K and
    W_V alone, in a module that has nothing left for W_O."""
    d_model, h = W.o.shape[1], len(W.q)
    d_k = d_model // h
    found: list[Placement] = []
    for transposed_bare in (False, True):  # bare square matrices: x @ W first (the course's), then x @ Wᵀ
        projections = []
        for p in params:
            if len(p.shape) != 2:
                continue
            ways = _orientations(p, d_model)
            if not ways:
                continue
            transposed = ways[0] if len(ways) == 1 else transposed_bare
            projections.append(_Projection(p, transposed, p.shape[0] if transposed else p.shape[1]))
        by_size: dict[int, list[_Projection]] = {}
        for proj in projections:
            by_size.setdefault(proj.outputs, []).append(proj)
        square, fused, kv, heads = (by_size.get(n, []) for n in (d_model, 3 * d_model, 2 * d_model, d_k))
        if d_k == d_model:
            heads = []
        for layout, ways in (_layouts if output else _layouts_without_output)(square, fused, kv, heads, h):
            for way in ways:
                try:
                    found.append(Placement(layout, _fill(layout, way, W, params), _roles(layout, way)))
                except ValueError:
                    continue
        if not any(len(p.shape) == 2 and p.shape[0] == p.shape[1] and len(_orientations(p, d_model)) == 2
                   for p in params):
            break  # nothing ambiguous to try the other way
    unique: list[Placement] = []
    for placement in found:
        if not any(_same(placement, u) for u in unique):
            unique.append(placement)
    return unique[:MAX_CANDIDATES]


def _same(a: Placement, b: Placement) -> bool:
    return a.values.keys() == b.values.keys() and all(np.array_equal(a.values[k], b.values[k]) for k in a.values)


def _layouts(square, fused, kv, heads, h):
    """(layout, ways of assigning roles) for the projections found."""
    if len(fused) == 1 and square:
        out = _output_last(square)
        for order in ("blocks", "interleaved"):
            yield "fused", [{"qkv": fused[0], "o": out[0], "order": order}]
    if len(kv) == 1 and len(square) >= 2:
        q = [p for p in square if _role(p.param.name) == "q"] or square[:1]
        out = [p for p in _output_last(square) if p is not q[0]] or square[-1:]
        for order in ("blocks", "interleaved"):
            yield "kv", [{"q": q[0], "kv": kv[0], "o": out[0], "order": order}]
    if len(square) == 4:
        yield "separate", _assign(square, "qkvo")
    if len(heads) == 3 * h and square:
        groups: dict[str, list[_Projection]] = {}
        for proj in heads:
            groups.setdefault(proj.param.name.rsplit(".", 2)[0], []).append(proj)
        if len(groups) == h and all(len(g) == 3 for g in groups.values()):
            out = _output_last(square)
            for roles in ("qkv", "kqv"):  # the lecture's Head creates key, query, value
                per = [_assign(g, roles)[0] for g in groups.values()]
                yield "per-head", [{"heads": per, "o": out[0]}]


def _layouts_without_output(square, fused, kv, heads, h):
    """As ``_layouts``, for a module whose projections leave none for W_O: each layout's Q, K and V alone."""
    if len(fused) == 1 and not square:
        for order in ("blocks", "interleaved"):
            yield "fused", [{"qkv": fused[0], "order": order}]
    if len(kv) == 1 and len(square) == 1:
        for order in ("blocks", "interleaved"):
            yield "kv", [{"q": square[0], "kv": kv[0], "order": order}]
    if len(square) == 3 and not fused and not kv:
        yield "separate", _assign(square, "qkv")
    if len(heads) == 3 * h and not square:
        groups: dict[str, list[_Projection]] = {}
        for proj in heads:
            groups.setdefault(proj.param.name.rsplit(".", 2)[0], []).append(proj)
        if len(groups) == h and all(len(g) == 3 for g in groups.values()):
            for roles in ("qkv", "kqv"):
                yield "per-head", [{"heads": [_assign(g, roles)[0] for g in groups.values()]}]


def _roles(layout: str, way: dict) -> dict:
    """Which parameters a placement gives each of the course's matrices, for telling the student."""
    if layout == "fused":
        roles = dict.fromkeys("qkv", (way["qkv"].param.name,))
    elif layout == "kv":
        roles = {"q": (way["q"].param.name,), "k": (way["kv"].param.name,), "v": (way["kv"].param.name,)}
    elif layout == "separate":
        roles = {r: (way[r].param.name,) for r in "qkv"}
    else:
        roles = {r: tuple(group[r].param.name for group in way["heads"]) for r in "qkv"}
    return {**roles, "o": (way["o"].param.name,)} if "o" in way else roles


def _fill(layout: str, way: dict, W: CourseWeights, params) -> dict:
    values = {}
    if layout == "fused":
        values[way["qkv"].param.name] = _value(way["qkv"], _head_order(W, "qkv", way["order"] == "interleaved"))
    elif layout == "kv":
        values[way["q"].param.name] = _value(way["q"], W.q_cat)
        values[way["kv"].param.name] = _value(way["kv"], _head_order(W, "kv", way["order"] == "interleaved"))
    elif layout == "separate":
        for role, course in (("q", W.q_cat), ("k", W.k_cat), ("v", W.v_cat)):
            values[way[role].param.name] = _value(way[role], course)
    else:
        for i, group in enumerate(way["heads"]):
            for role, mats in (("q", W.q), ("k", W.k), ("v", W.v)):
                values[group[role].param.name] = _value(group[role], mats[i])
    if "o" in way:
        values[way["o"].param.name] = _value(way["o"], W.o)
    if len(values) != len({id(v) for v in values}) or len(set(values)) < len(values):
        raise ValueError("one parameter in two roles")
    return _with_zero_biases(params, values)


def _with_zero_biases(params, values: dict) -> dict:
    for p in params:
        last = p.name.rsplit(".", 1)[-1].lower()
        if "bias" in last and p.name not in values:
            if p.entries > MAX_FILL:
                raise TooLarge(p)
            values[p.name] = np.zeros(p.shape)
    return values
