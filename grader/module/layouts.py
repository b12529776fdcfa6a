"""Where the course's W_Q, W_K, W_V, W_O may go in a student's module: candidate placements, chosen by behaviour.

A module's parameters (names, shapes, the class of the module holding each, from ``wire``) give a few
candidate placements; names are a hint for the order, never a requirement. The grader runs every
candidate through the student's own forward and keeps the one whose output is the course's (``checks``):
so a fused projection's block order (``[q | k | v]``, or per head ``[q_1 k_1 v_1 | q_2 …]`` as GPT-NeoX),
a bare square matrix used as ``x @ W`` or as ``x @ W.T``, and separate projections under any names are
told apart by what they compute. The course computes ``Q_i = X W_Q[i]`` with W_Q[i] of shape
(d_model, d_k) and ``Y = [head_1 | … | head_h] W_O``; ``nn.Linear`` computes ``x Wᵀ``, so a Linear's
weight is the transpose of the matrix the course multiplies by; GPT-2's ``Conv1D`` stores (in, out).

Each layout is one object in ``LAYOUTS`` (``Layout``: ``recognise`` the ways it fits a module's projections, ``fill``
them with the course's matrices); ``place`` adds W_O and the zeroed biases, and refuses a way that would give one
parameter two matrices. The layouts (each projection a 2-D parameter whose input side is d_model):
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
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from grader.module.wire import MAX_FILL, Param

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
        rest = [p for p in projections if _role(p.param.name) not in set(roles)]  # None: named for no role
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


@dataclass(frozen=True)
class Projections:
    """A module's 2-D parameters that take d_model inputs, by the width of their outputs (a bare square matrix in
    one orientation): what a layout recognises."""

    square: list[_Projection]  # d_model outputs: Q, K, V or the output projection alone
    fused: list[_Projection]  # 3·d_model: Q, K and V in one
    kv: list[_Projection]  # 2·d_model: K and V in one
    heads: list[_Projection]  # d_k (none when d_k is d_model): one head's Q, K or V
    h: int

    def head_groups(self) -> list[list[_Projection]] | None:
        """The per-head projections grouped by the module holding them (``heads.3``): h groups of three, else None."""
        if len(self.heads) != 3 * self.h:
            return None
        groups: dict[str, list[_Projection]] = {}
        for proj in self.heads:
            groups.setdefault(proj.param.name.rsplit(".", 2)[0], []).append(proj)
        if len(groups) == self.h and all(len(g) == 3 for g in groups.values()):
            return list(groups.values())
        return None


def find_projections(params, d_model: int, h: int, transposed_bare: bool) -> Projections:
    """The projections among ``params``; a bare square matrix (either orientation fits) taken as ``x @ Wᵀ`` when
    ``transposed_bare``, else as ``x @ W``."""
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
    d_k = d_model // h
    square, fused, kv, heads = (by_size.get(n, []) for n in (d_model, 3 * d_model, 2 * d_model, d_k))
    return Projections(square, fused, kv, [] if d_k == d_model else heads, h)


class Layout(ABC):
    """One way of holding the course's W_Q, W_K and W_V, its two halves together: ``recognise`` finds in a module's
    projections the ways of giving each its role (a way: role -> projection, "o" -> the output projection where
    there is one, and the block order), ``fill`` says which of the course's matrices goes to each projection of a
    way, ``roles`` which parameters a way gives Q, K and V. W_O, the zeroed biases and the refusal of one parameter
    in two roles are ``place``'s."""

    name: str

    @abstractmethod
    def recognise(self, found: Projections, output: bool) -> Iterator[dict]:
        """The ways of this layout in ``found``: with an output projection, or (``output=False``) in a module whose
        projections leave none for W_O."""
        raise NotImplementedError

    @abstractmethod
    def fill(self, way: dict, W: CourseWeights) -> list[tuple[_Projection, np.ndarray]]:
        raise NotImplementedError

    @abstractmethod
    def roles(self, way: dict) -> dict[str, tuple[str, ...]]:
        raise NotImplementedError


class _Fused(Layout):
    """One projection with 3·d_model outputs: Q, K and V in blocks (``[q | k | v]``) or per head (GPT-NeoX)."""

    name = "fused"

    def recognise(self, found: Projections, output: bool) -> Iterator[dict]:
        if len(found.fused) == 1 and bool(found.square) == output:
            out = {"o": _output_last(found.square)[0]} if output else {}
            for order in ("blocks", "interleaved"):
                yield {"qkv": found.fused[0], **out, "order": order}

    def fill(self, way: dict, W: CourseWeights) -> list[tuple[_Projection, np.ndarray]]:
        return [(way["qkv"], _head_order(W, "qkv", way["order"] == "interleaved"))]

    def roles(self, way: dict) -> dict[str, tuple[str, ...]]:
        return dict.fromkeys("qkv", (way["qkv"].param.name,))


class _KV(Layout):
    """One projection with d_model outputs for Q, one with 2·d_model for K and V (``to_q``, ``to_kv``)."""

    name = "kv"

    def recognise(self, found: Projections, output: bool) -> Iterator[dict]:
        if len(found.kv) != 1:
            return
        if output and len(found.square) >= 2:
            q = [p for p in found.square if _role(p.param.name) == "q"] or found.square[:1]
            # the output is the square named so, else the last one created; where that one is Q, the placement gives
            # one parameter two roles and ``candidates`` drops it
            out = [p for p in _output_last(found.square) if p is not q[0]] or found.square[-1:]
            for order in ("blocks", "interleaved"):
                yield {"q": q[0], "kv": found.kv[0], "o": out[0], "order": order}
        elif not output and len(found.square) == 1:
            for order in ("blocks", "interleaved"):
                yield {"q": found.square[0], "kv": found.kv[0], "order": order}

    def fill(self, way: dict, W: CourseWeights) -> list[tuple[_Projection, np.ndarray]]:
        return [(way["q"], W.q_cat), (way["kv"], _head_order(W, "kv", way["order"] == "interleaved"))]

    def roles(self, way: dict) -> dict[str, tuple[str, ...]]:
        return {"q": (way["q"].param.name,), "k": (way["kv"].param.name,), "v": (way["kv"].param.name,)}


class _Separate(Layout):
    """Four projections with d_model outputs (three without W_O), given their roles by name, else by order."""

    name = "separate"

    def recognise(self, found: Projections, output: bool) -> Iterator[dict]:
        if output and len(found.square) == 4:
            yield from _assign(found.square, "qkvo")
        elif not output and len(found.square) == 3 and not found.fused and not found.kv:
            yield from _assign(found.square, "qkv")

    def fill(self, way: dict, W: CourseWeights) -> list[tuple[_Projection, np.ndarray]]:
        return [(way["q"], W.q_cat), (way["k"], W.k_cat), (way["v"], W.v_cat)]

    def roles(self, way: dict) -> dict[str, tuple[str, ...]]:
        return {r: (way[r].param.name,) for r in "qkv"}


class _PerHead(Layout):
    """h groups of three projections with d_k outputs (the lecture's ``Head``)."""

    name = "per-head"

    def recognise(self, found: Projections, output: bool) -> Iterator[dict]:
        groups = found.head_groups()
        if groups is None or bool(found.square) != output:
            return
        out = {"o": _output_last(found.square)[0]} if output else {}
        for roles in ("qkv", "kqv"):  # the lecture's Head creates key, query, value
            yield {"heads": [_assign(g, roles)[0] for g in groups], **out}

    def fill(self, way: dict, W: CourseWeights) -> list[tuple[_Projection, np.ndarray]]:
        return [(group[role], mats[i]) for i, group in enumerate(way["heads"])
                for role, mats in (("q", W.q), ("k", W.k), ("v", W.v))]

    def roles(self, way: dict) -> dict[str, tuple[str, ...]]:
        return {r: tuple(group[r].param.name for group in way["heads"]) for r in "qkv"}


# The layouts, in the order their candidates are tried.
LAYOUTS: tuple[Layout, ...] = (_Fused(), _KV(), _Separate(), _PerHead())


def place(layout: Layout, way: dict, W: CourseWeights, params) -> Placement:
    """The course's matrices in one way of ``layout``, W_O in its output projection where it has one, every bias zero;
    ValueError where a matrix does not fit its parameter or one parameter would be given two matrices, ``TooLarge``
    where a bias to zero is larger than ``MAX_FILL``."""
    filled = layout.fill(way, W) + ([(way["o"], W.o)] if "o" in way else [])
    values: dict[str, np.ndarray] = {}
    for proj, course in filled:
        if proj.param.name in values:
            raise ValueError(f"one parameter in two roles: {proj.param.name}")
        values[proj.param.name] = _value(proj, course)
    roles = layout.roles(way)
    roles = {**roles, "o": (way["o"].param.name,)} if "o" in way else roles
    return Placement(layout.name, _with_zero_biases(params, values), roles)


def candidates(params: tuple[Param, ...] | list[Param], W: CourseWeights, output: bool = True) -> list[Placement]:
    """Every placement the parameters allow, most likely first (at most ``MAX_CANDIDATES``); raises
    ``TooLarge`` when a parameter to fill is larger than ``MAX_FILL``. ``output=False``: placements of W_Q, W_K and
    W_V alone, in a module that has nothing left for W_O."""
    d_model, h = W.o.shape[1], len(W.q)
    found: list[Placement] = []
    for transposed_bare in (False, True):  # bare square matrices: x @ W first (the course's), then x @ Wᵀ
        projections = find_projections(params, d_model, h, transposed_bare)
        for layout in LAYOUTS:
            for way in layout.recognise(projections, output):
                try:
                    found.append(place(layout, way, W, params))
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


def _with_zero_biases(params, values: dict) -> dict:
    for p in params:
        last = p.name.rsplit(".", 1)[-1].lower()
        if "bias" in last and p.name not in values:
            if p.entries > MAX_FILL:
                raise TooLarge(p)
            values[p.name] = np.zeros(p.shape)
    return values
