"""A class written for measuring the class page's similarity: independent hand-ins of question 1 and disguised copies.

The independent hand-ins are put together from building blocks: for each of the seven functions several ways
students write it (a product operator or ``np.dot``, loops or vectorised, a helper split off or not, the mask
added or put in with ``np.where``), each with small choices of its own (an intermediate variable or not, axis
``1`` or ``-1``, ``keepdims`` or ``[:, None]``, an ``asarray`` first), names in one of several styles (math
letters, English words, Portuguese words) and comments in Portuguese, English or none. No two hand-ins are the
same choice of blocks. The copies are eight of them disguised in the ways students disguise code: identifiers
renamed, functions reordered, comments translated, reformatting, dead code and prints, one function rewritten,
a bug, a partial copy. The R class is built the same way from R blocks, with four copies of its own.

``python_class()`` and ``r_class()`` return ``{name: (language, source)}`` and the true copy pairs.
"""

from __future__ import annotations

import random
import re

# Name styles: the same roles, the names students give them
STYLES = [
    dict(X="X", W="W", Q="Q", K="K", V="V", S="S", n="n", e="e", M="M", A="A", H="heads", d="d_k", O="out", r="row",
         WQ="W_Q", WK="W_K", WV="W_V", WO="W_O", q="wq", k="wk", v="wv", h="h", i="i", j="j"),
    dict(X="x", W="w", Q="q", K="k", V="v", S="scores", n="size", e="exps", M="mask", A="weights", H="outputs",
         d="dim", O="result", r="line", WQ="W_Q", WK="W_K", WV="W_V", WO="W_O", q="w_q", k="w_k", v="w_v",
         h="head", i="a", j="b"),
    dict(X="entrada", W="pesos", Q="consultas", K="chaves", V="valores", S="escores", n="tamanho", e="expo",
         M="mascara", A="atencao", H="cabecas", d="dk", O="saida", r="linha", WQ="W_Q", WK="W_K", WV="W_V",
         WO="W_O", q="pq", k="pk", v="pv", h="cabeca", i="lin", j="col"),
    dict(X="inputs", W="weight", Q="queries", K="keys", V="values", S="logits", n="length", e="numer", M="causal_m",
         A="probs", H="head_outputs", d="key_dim", O="output", r="vec", WQ="W_Q", WK="W_K", WV="W_V", WO="W_O",
         q="Wq_h", k="Wk_h", v="Wv_h", h="idx", i="r", j="c"),
    dict(X="X_in", W="W_mat", Q="Qm", K="Km", V="Vm", S="Sc", n="T", e="ex", M="Mk", A="P", H="hs", d="dk",
         O="Y", r="s", WQ="W_Q", WK="W_K", WV="W_V", WO="W_O", q="a", k="b", v="c", h="t", i="u", j="z"),
]

COMMENTS = {
    "project": ("projeta a entrada com os pesos", "project the input with the weights"),
    "scaled_scores": ("produto escalar dividido pela raiz de d_k", "dot products scaled by sqrt(d_k)"),
    "causal_mask": ("-inf acima da diagonal: nada do futuro", "-inf above the diagonal: no peeking ahead"),
    "softmax": ("subtrai o maximo para nao estourar", "subtract the max so exp does not overflow"),
    "attention_weights": ("escores, mascara e softmax", "scores, then the mask, then softmax"),
    "attention_head": ("media ponderada dos valores", "weighted average of the values"),
    "multi_head_attention": ("uma cabeca por vez e concatena", "one head at a time, then concatenate"),
}

# Each function's ways, as code with {role} placeholders; {c} is where the comment goes (or nothing).
PYTHON = {
    "project": [
        "def project({X}, {W}):\n{c}    return {X} @ {W}\n",
        "def project({X}, {W}):\n{c}    return np.dot({X}, {W})\n",
        "def project({X}, {W}):\n{c}    {O} = np.matmul({X}, {W})\n    return {O}\n",
        "def project({X}, {W}):\n{c}    rows, inner = {X}.shape\n    cols = {W}.shape[1]\n"
        "    {O} = np.zeros((rows, cols))\n    for {i} in range(rows):\n        for {j} in range(cols):\n"
        "            for t in range(inner):\n                {O}[{i}, {j}] += {X}[{i}, t] * {W}[t, {j}]\n    return"
        " {O}\n",
        "def project({X}, {W}):\n{c}    return np.einsum('ij,jk->ik', {X}, {W})\n",
    ],
    "scaled_scores": [
        "def scaled_scores({Q}, {K}):\n{c}    return {Q} @ {K}.T / np.sqrt({Q}.shape[1])\n",
        "def scaled_scores({Q}, {K}):\n{c}    {d} = {Q}.shape[-1]\n    {S} = np.dot({Q}, {K}.T)\n"
        "    return {S} / math.sqrt({d})\n",
        "def scaled_scores({Q}, {K}):\n{c}    return np.matmul({Q}, {K}.transpose()) / np.sqrt({K}.shape[1])\n",
        "def scaled_scores({Q}, {K}):\n{c}    {d} = {Q}.shape[1]\n    {S} = np.zeros(({Q}.shape[0], {K}.shape[0]))\n"
        "    for {i} in range({Q}.shape[0]):\n        for {j} in range({K}.shape[0]):\n"
        "            {S}[{i}, {j}] = np.dot({Q}[{i}], {K}[{j}]) / np.sqrt({d})\n    return {S}\n",
        "def scaled_scores({Q}, {K}):\n{c}    {d} = {K}.shape[-1]\n"
        "    return np.einsum('id,jd->ij', {Q}, {K}) / {d} ** 0.5\n",
    ],
    "causal_mask": [
        "def causal_mask({n}):\n{c}    return np.triu(np.full(({n}, {n}), -np.inf), k=1)\n",
        "def causal_mask({n}):\n{c}    {M} = np.zeros(({n}, {n}))\n    {M}[np.triu_indices({n}, 1)] = -np.inf\n"
        "    return {M}\n",
        "def causal_mask({n}):\n{c}    {M} = np.zeros(({n}, {n}))\n    for {i} in range({n}):\n"
        "        for {j} in range({i} + 1, {n}):\n            {M}[{i}, {j}] = -np.inf\n    return {M}\n",
        "def causal_mask({n}):\n{c}    return np.where(np.tril(np.ones(({n}, {n}))) == 1, 0.0, -np.inf)\n",
        "def causal_mask({n}):\n{c}    pos = np.arange({n})\n"
        "    return np.where(pos[None, :] > pos[:, None], -np.inf, 0.0)\n",
    ],
    "softmax": [
        "def softmax({S}):\n{c}    {e} = np.exp({S} - {S}.max(axis={ax}, keepdims=True))\n"
        "    return {e} / {e}.sum(axis={ax}, keepdims=True)\n",
        "def softmax({S}):\n{c}    shifted = {S} - np.max({S}, axis={ax})[:, None]\n    {e} = np.exp(shifted)\n"
        "    return {e} / np.sum({e}, axis={ax})[:, None]\n",
        "def softmax({S}):\n{c}    {O} = np.zeros_like({S}, dtype=float)\n    for {i} in range({S}.shape[0]):\n"
        "        {r} = {S}[{i}] - np.max({S}[{i}])\n        {e} = np.exp({r})\n        {O}[{i}] = {e} / {e}.sum()\n"
        "    return {O}\n",
        "def _stable_exp({S}):\n    return np.exp({S} - np.max({S}, axis={ax}, keepdims=True))\n\n\n"
        "def softmax({S}):\n{c}    {e} = _stable_exp({S})\n    return {e} / np.sum({e}, axis={ax}, keepdims=True)\n",
        "def softmax({S}):\n{c}    return np.array([np.exp({r} - {r}.max()) / np.exp({r} - {r}.max()).sum() "
        "for {r} in {S}])\n",
    ],
    "attention_weights": [
        "def attention_weights({Q}, {K}, causal=True):\n{c}    {S} = scaled_scores({Q}, {K})\n    if causal:\n"
        "        {S} = {S} + causal_mask({S}.shape[0])\n    return softmax({S})\n",
        "def attention_weights({Q}, {K}, causal=True):\n{c}    {S} = scaled_scores({Q}, {K})\n"
        "    return softmax({S} + causal_mask(len({S})) if causal else {S})\n",
        "def attention_weights({Q}, {K}, causal=True):\n{c}    {n} = {Q}.shape[0]\n    {S} = scaled_scores({Q}, {K})\n"
        "    {M} = causal_mask({n}) if causal else np.zeros(({n}, {n}))\n    return softmax({S} + {M})\n",
        "def attention_weights({Q}, {K}, causal=True):\n{c}    {S} = scaled_scores({Q}, {K})\n    if not causal:\n"
        "        return softmax({S})\n    return softmax({S} + causal_mask({Q}.shape[0]))\n",
        "def attention_weights({Q}, {K}, causal=True):\n{c}    {S} = scaled_scores({Q}, {K})\n    if causal:\n"
        "        {S} = np.where(np.isinf(causal_mask(len({Q}))), -np.inf, {S})\n    return softmax({S})\n",
    ],
    "attention_head": [
        "def attention_head({Q}, {K}, {V}, causal=True):\n{c}    return attention_weights({Q}, {K}, causal) @ {V}\n",
        "def attention_head({Q}, {K}, {V}, causal=True):\n{c}    {A} = attention_weights({Q}, {K}, causal=causal)\n"
        "    return np.dot({A}, {V})\n",
        "def attention_head({Q}, {K}, {V}, causal=True):\n{c}    {A} = attention_weights({Q}, {K}, causal)\n"
        "    {O} = {A} @ {V}\n    return {O}\n",
        "def attention_head({Q}, {K}, {V}, causal=True):\n{c}"
        "    return np.matmul(attention_weights({Q}, {K}, causal), {V})\n",
    ],
    "multi_head_attention": [
        "def multi_head_attention({X}, {WQ}, {WK}, {WV}, {WO}, causal=True):\n{c}    {H} = [\n"
        "        attention_head(project({X}, {q}), project({X}, {k}), project({X}, {v}), causal)\n"
        "        for {q}, {k}, {v} in zip({WQ}, {WK}, {WV})\n    ]\n    return np.concatenate({H}, axis=1) @ {WO}\n",
        "def multi_head_attention({X}, {WQ}, {WK}, {WV}, {WO}, causal=True):\n{c}    {H} = []\n"
        "    for {h} in range(len({WQ})):\n        {Q} = project({X}, {WQ}[{h}])\n        {K} = project({X},"
        " {WK}[{h}])\n"
        "        {V} = project({X}, {WV}[{h}])\n        {H}.append(attention_head({Q}, {K}, {V}, causal))\n"
        "    concat = np.hstack({H})\n    return concat @ {WO}\n",
        "def multi_head_attention({X}, {WQ}, {WK}, {WV}, {WO}, causal=True):\n{c}    {H} = []\n"
        "    for {q}, {k}, {v} in zip({WQ}, {WK}, {WV}):\n"
        "        {H}.append(attention_head(project({X}, {q}), project({X}, {k}), project({X}, {v}), causal))\n"
        "    return project(np.concatenate({H}, axis=-1), {WO})\n",
        "def one_head({X}, {q}, {k}, {v}, causal):\n    return attention_head({X} @ {q}, {X} @ {k}, {X} @ {v},"
        " causal)\n\n\n"
        "def multi_head_attention({X}, {WQ}, {WK}, {WV}, {WO}, causal=True):\n{c}"
        "    {H} = [one_head({X}, {WQ}[{h}], {WK}[{h}], {WV}[{h}], causal) for {h} in range(len({WQ}))]\n"
        "    return np.concatenate({H}, axis=1) @ {WO}\n",
        "def multi_head_attention({X}, {WQ}, {WK}, {WV}, {WO}, causal=True):\n{c}    {n} = {X}.shape[0]\n"
        "    {d} = {WV}[0].shape[1]\n    {H} = np.zeros(({n}, {d} * len({WQ})))\n    for {h} in range(len({WQ})):\n"
        "        {H}[:, {h} * {d}:({h} + 1) * {d}] = attention_head(project({X}, {WQ}[{h}]), project({X}, {WK}[{h}]),\n"
        "                                                 project({X}, {WV}[{h}]), causal)\n    return {H} @ {WO}\n",
    ],
}

R = {
    "project": [
        "project <- function({X}, {W}) {{\n{c}  {X} %*% {W}\n}}\n",
        "project <- function({X}, {W}) {{\n{c}  crossprod(t({X}), {W})\n}}\n",
        "project <- function({X}, {W}) {{\n{c}  {O} <- matrix(0, nrow({X}), ncol({W}))\n"
        "  for ({i} in seq_len(nrow({X}))) {{\n    for ({j} in seq_len(ncol({W}))) {{\n"
        "      {O}[{i}, {j}] <- sum({X}[{i}, ] * {W}[, {j}])\n    }}\n  }}\n  {O}\n}}\n",
    ],
    "scaled_scores": [
        "scaled_scores <- function({Q}, {K}) {{\n{c}  {Q} %*% t({K}) / sqrt(ncol({Q}))\n}}\n",
        "scaled_scores <- function({Q}, {K}) {{\n{c}  {d} <- ncol({K})\n  tcrossprod({Q}, {K}) / sqrt({d})\n}}\n",
        "scaled_scores <- function({Q}, {K}) {{\n{c}  {S} <- matrix(0, nrow({Q}), nrow({K}))\n"
        "  for ({i} in 1:nrow({Q})) for ({j} in 1:nrow({K})) {S}[{i}, {j}] <- sum({Q}[{i}, ] * {K}[{j}, ])\n"
        "  {S} / sqrt(ncol({Q}))\n}}\n",
    ],
    "causal_mask": [
        "causal_mask <- function({n}) {{\n{c}  {M} <- matrix(0, {n}, {n})\n  {M}[upper.tri({M})] <- -Inf\n  {M}\n}}\n",
        "causal_mask <- function({n})"
        " {{\n{c}  outer(seq_len({n}), seq_len({n}), function({i}, {j}) ifelse({j} > {i}, -Inf, 0))\n}}\n",
        "causal_mask <- function({n}) {{\n{c}  {M} <- matrix(0, nrow = {n}, ncol = {n})\n"
        "  for ({i} in seq_len({n})) {{\n    if ({i} < {n}) {M}[{i}, ({i} + 1):{n}] <- -Inf\n  }}\n  {M}\n}}\n",
        "causal_mask <- function({n})"
        " {{\n{c}  {M} <- matrix(0, nrow = {n}, ncol = {n})\n  {M}[col({M}) > row({M})] <- -Inf\n  {M}\n}}\n",
    ],
    "softmax": [
        "softmax <- function({S})"
        " {{\n{c}  t(apply({S}, 1, function({r}) {{\n    {e} <- exp({r} - max({r}))\n    {e} / sum({e})\n  }}))\n}}\n",
        "softmax <- function({S}) {{\n{c}  {e} <- exp({S} - apply({S}, 1, max))\n  {e} / rowSums({e})\n}}\n",
        "softmax <- function({S})"
        " {{\n{c}  {O} <- {S}\n  for ({i} in seq_len(nrow({S}))) {{\n    {r} <- exp({S}[{i}, ] - max({S}[{i}, ]))\n"
        "    {O}[{i}, ] <- {r} / sum({r})\n  }}\n  {O}\n}}\n",
        "softmax <- function({S})"
        " {{\n{c}  {e} <- exp(sweep({S}, 1, apply({S}, 1, max)))\n  sweep({e}, 1, rowSums({e}), \"/\")\n}}\n",
    ],
    "attention_weights": [
        "attention_weights <- function({Q}, {K}, causal = TRUE) {{\n{c}  {S} <- scaled_scores({Q}, {K})\n"
        "  if (causal) {S} <- {S} + causal_mask(nrow({S}))\n  softmax({S})\n}}\n",
        "attention_weights <- function({Q}, {K}, causal = TRUE) {{\n{c}  {S} <- scaled_scores({Q}, {K})\n"
        "  softmax(if (causal) {S} + causal_mask(nrow({S})) else {S})\n}}\n",
        "attention_weights <- function({Q}, {K}, causal = TRUE) {{\n{c}  {n} <- nrow({Q})\n"
        "  {M} <- if (causal) causal_mask({n}) else matrix(0, {n}, {n})\n  softmax(scaled_scores({Q}, {K}) +"
        " {M})\n}}\n",
    ],
    "attention_head": [
        "attention_head <- function({Q}, {K}, {V}, causal = TRUE)"
        " {{\n{c}  attention_weights({Q}, {K}, causal) %*% {V}\n}}\n",
        "attention_head <- function({Q}, {K}, {V}, causal = TRUE)"
        " {{\n{c}  {A} <- attention_weights({Q}, {K}, causal = causal)\n"
        "  {A} %*% {V}\n}}\n",
        "attention_head <- function({Q}, {K}, {V}, causal = TRUE) {{\n{c}  {O} <- attention_weights({Q}, {K}, causal)\n"
        "  {O} <- {O} %*% {V}\n  {O}\n}}\n",
    ],
    "multi_head_attention": [
        "multi_head_attention <- function({X}, {WQ}, {WK}, {WV}, {WO}, causal = TRUE) {{\n{c}"
        "  {H} <- lapply(seq_along({WQ}), function({h}) attention_head(project({X}, {WQ}[[{h}]]),\n"
        "    project({X}, {WK}[[{h}]]), project({X}, {WV}[[{h}]]), causal))\n  do.call(cbind, {H}) %*% {WO}\n}}\n",
        "multi_head_attention <- function({X}, {WQ}, {WK}, {WV}, {WO}, causal = TRUE) {{\n{c}  {H} <- NULL\n"
        "  for ({h} in seq_along({WQ})) {{\n    {Q} <- {X} %*% {WQ}[[{h}]]\n    {K} <- {X} %*% {WK}[[{h}]]\n"
        "    {V} <- {X} %*% {WV}[[{h}]]\n    {H} <- cbind({H}, attention_head({Q}, {K}, {V}, causal))\n  }}\n"
        "  {H} %*% {WO}\n}}\n",
        "multi_head_attention <- function({X}, {WQ}, {WK}, {WV}, {WO}, causal = TRUE) {{\n{c}  {d} <- ncol({WV}[[1]])\n"
        "  {H} <- matrix(0, nrow({X}), {d} * length({WQ}))\n  for ({h} in seq_along({WQ})) {{\n"
        "    cols <- (({h} - 1) * {d} + 1):({h} * {d})\n"
        "    {H}[, cols] <- attention_head(project({X}, {WQ}[[{h}]]), project({X}, {WK}[[{h}]]), project({X},"
        " {WV}[[{h}]]), causal)\n"
        "  }}\n  project({H}, {WO})\n}}\n",
    ],
}

FUNCTIONS = list(PYTHON)


def _comment(function: str, lang: int | None, mark: str, indent: str) -> str:
    return "" if lang is None else f"{indent}{mark} {COMMENTS[function][lang]}\n"


def _choices(rng: random.Random, blocks: dict, count: int, apart: int) -> list[tuple[int, ...]]:
    """``count`` choices of one block per function, each pair apart in at least ``apart`` functions."""
    chosen: list[tuple[int, ...]] = []
    while len(chosen) < count:
        pick = tuple(rng.randrange(len(blocks[f])) for f in FUNCTIONS)
        if all(sum(a != b for a, b in zip(pick, other, strict=True)) >= apart for other in chosen):
            chosen.append(pick)
    return chosen


def python_file(pick: tuple[int, ...], style: dict, lang: int | None, ax: str, header: str,
                docstrings: bool, rng: random.Random) -> str:
    parts = [f'"""{header}"""\n\n' if header else "", "import math\n" if "math." in "".join(
        PYTHON[f][p] for f, p in zip(FUNCTIONS, pick, strict=True)) else "", "import numpy as np\n\n\n"]
    for function, p in zip(FUNCTIONS, pick, strict=True):
        body = PYTHON[function][p]
        comment = _comment(function, lang, "#", "    ")
        if docstrings and lang is not None:
            comment = f'    """{COMMENTS[function][lang].capitalize()}."""\n' + (comment if rng.random() < 0.3 else "")
        parts.append(body.format(c=comment, ax=ax, **style) + "\n\n")
    return "".join(parts).rstrip() + "\n"


def python_habits(source: str, rng: random.Random) -> str:
    """One student's own habits over the whole file, and a few choices per function: how they transpose, write
    minus infinity, count from zero, shape a zeros array, and whether a function's result gets a name first."""
    out = source
    if rng.random() < 0.5:
        out = re.sub(r"(\w+)\.T\b", r"\1.transpose()", out)
    if rng.random() < 0.4:
        out = out.replace("-np.inf", "float('-inf')")
    if rng.random() < 0.4:
        out = re.sub(r"range\((\w+)\)", r"range(0, \1)", out)
    if rng.random() < 0.5:
        out = re.sub(r"np\.zeros\(\(([^()]*)\)\)", r"np.zeros([\1])", out)
    if rng.random() < 0.3:
        out = re.sub(r"\.shape\[0\]", ".shape[-2]", out)

    def named(match: re.Match) -> str:
        if rng.random() < 0.4 and "\n" not in match.group(1):
            name = rng.choice(("res", "resultado", "answer", "out_", "ret"))
            return f"    {name} = {match.group(1)}\n    return {name}\n"
        return match.group(0)

    return re.sub(r"^    return (.+)\n", named, out, flags=re.M)


def r_habits(source: str, rng: random.Random) -> str:
    """An R student's habits: ``=`` or ``<-``, ``1:n`` or ``seq_len(n)``, ``dim(x)[1]`` or ``nrow(x)``, an explicit
    ``return()`` at the end of some functions."""
    out = source
    if rng.random() < 0.35:
        out = out.replace(" <- ", " = ")
    if rng.random() < 0.5:
        out = re.sub(r"seq_len\((\w+)\)", r"1:\1", out)
    if rng.random() < 0.4:
        out = re.sub(r"nrow\((\w+)\)", r"dim(\1)[1]", out)

    def returned(match: re.Match) -> str:
        if rng.random() < 0.4:
            return f"\n  return({match.group(1)})\n}}"
        return match.group(0)

    return re.sub(r"\n  ([^\n{}]+)\n\}", returned, out)


def r_file(pick: tuple[int, ...], style: dict, lang: int | None, header: str) -> str:
    parts = [f"# {header}\n\n" if header else ""]
    for function, p in zip(FUNCTIONS, pick, strict=True):
        parts.append(R[function][p].format(c=_comment(function, lang, "#", "  "), **style) + "\n")
    return "".join(parts).rstrip() + "\n"


HEADERS = ("Trabalho 1: atencao com mascara", "Assignment 1 - masked attention", "", "Minha solucao", "")


def python_class(independent: int = 40, seed: int = 2024) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str]]]:
    rng = random.Random(seed)
    files, picks = {}, _choices(rng, PYTHON, independent, 3)
    for number, pick in enumerate(picks):
        style = rng.choice(STYLES)
        lang = rng.choice((0, 1, None))
        files[f"py{number:02d}"] = python_habits(python_file(pick, style, lang, rng.choice(("1", "-1")),
                                                             rng.choice(HEADERS), rng.random() < 0.4, rng), rng)
    copies = {}
    originals = [f"py{n:02d}" for n in rng.sample(range(independent), 8)]
    source = {name: files[name] for name in originals}
    copies["copy_renamed"] = renamed(source[originals[0]], rng)
    copies["copy_reordered"] = reordered(source[originals[1]], rng)
    copies["copy_translated"] = translated(source[originals[2]])
    copies["copy_reformatted"] = reformatted(source[originals[3]])
    copies["copy_deadcode"] = dead_code(source[originals[4]])
    copies["copy_rewritten"] = rewritten(source[originals[5]], picks[int(originals[5][2:])], rng)
    copies["copy_buggy"] = buggy(source[originals[6]])
    copies["copy_partial"] = partial(source[originals[7]], picks[int(originals[7][2:])], rng)
    pairs = [(copy, original) for copy, original in zip(copies, originals, strict=True)]
    return {**{n: ("python", s) for n, s in files.items()}, **{n: ("python", s) for n, s in copies.items()}}, pairs


def r_class(independent: int = 16, seed: int = 7) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str]]]:
    rng = random.Random(seed)
    files, picks = {}, _choices(rng, R, independent, 3)
    for number, pick in enumerate(picks):
        files[f"r{number:02d}"] = r_habits(r_file(pick, rng.choice(STYLES), rng.choice((0, 1, None)),
                                                  rng.choice(HEADERS)), rng)
    originals = [f"r{n:02d}" for n in rng.sample(range(independent), 4)]
    copies = {"rcopy_renamed": renamed(files[originals[0]], rng),
              "rcopy_reordered": reordered(files[originals[1]], rng, r=True),
              "rcopy_deadcode": r_dead_code(files[originals[2]]),
              "rcopy_partial": r_partial(files[originals[3]], picks[int(originals[3][1:])], rng)}
    pairs = list(zip(copies, originals, strict=True))
    return {**{n: ("r", s) for n, s in files.items()}, **{n: ("r", s) for n, s in copies.items()}}, pairs


# ---- the disguises -------------------------------------------------------------------------------------------

KEEP = {"np", "math", "def", "return", "for", "in", "range", "if", "else", "not", "and", "or", "True", "False",
        "causal", "import", "numpy", "as", "len", "zip", "function", "TRUE", "FALSE", "Inf", "NULL", "shape", "T",
        "max", "sum", "exp", "sqrt", "dot", "matmul", "einsum", "zeros", "triu", "full", "inf", "where", "tril",
        "ones", "arange", "axis", "keepdims", "array", "zeros_like", "dtype", "float", "append", "concatenate",
        "hstack", "transpose", "isinf", "triu_indices", "k", "matrix", "nrow", "ncol", "apply", "rowSums", "sweep",
        "outer", "seq_len", "seq_along", "ifelse", "crossprod", "tcrossprod", "t", "upper.tri", "lapply", "do.call",
        "cbind", "length", "col", "row", *FUNCTIONS, "_stable_exp", "one_head"}


def renamed(source: str, rng: random.Random) -> str:
    """Every identifier the student chose renamed (function parameters and locals), comments kept."""
    code, comments = _split_comments(source)
    names = sorted({n for n in re.findall(r"\b[A-Za-z_][A-Za-z_0-9]*\b", code) if n not in KEEP} - {"W_Q", "W_K",
                                                                                                  "W_V", "W_O"})
    fresh = {n: f"v_{rng.randrange(10**6):06d}_{n.lower()}" for n in names}
    code = re.sub(r"\b[A-Za-z_][A-Za-z_0-9]*\b", lambda m: fresh.get(m.group(0), m.group(0)), code)
    return _join_comments(code, comments)


def _split_comments(source: str) -> tuple[str, dict[int, str]]:
    """The code with every comment and docstring line set apart (by line number), to be put back."""
    lines, comments = source.split("\n"), {}
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("#", '"""')):
            comments[i], lines[i] = line, ""
    return "\n".join(lines), comments


def _join_comments(code: str, comments: dict[int, str]) -> str:
    lines = code.split("\n")
    for i, line in comments.items():
        lines[i] = line
    return "\n".join(lines)


def _blocks(source: str, r: bool = False) -> tuple[str, list[str]]:
    """The file's preamble and its top-level functions, each with what follows it."""
    start = r"^[A-Za-z_][A-Za-z_0-9.]* (?:<-|=) function" if r else r"^def "
    cuts = [m.start() for m in re.finditer(start, source, re.M)]
    return source[: cuts[0]], [source[a:b] for a, b in zip(cuts, cuts[1:] + [len(source)], strict=True)]


def reordered(source: str, rng: random.Random, r: bool = False) -> str:
    head, blocks = _blocks(source, r)
    blocks = [b.rstrip() + "\n\n\n" for b in blocks]
    rng.shuffle(blocks)
    return head + "".join(blocks).rstrip() + "\n"


def translated(source: str) -> str:
    """Comments and docstrings in the other language (a file with none gets comments of the copier's own)."""
    out = source
    for i, (pt, en) in enumerate(COMMENTS.values()):
        out = out.replace(pt, f"\x00{i}a").replace(en, f"\x00{i}b")
        out = out.replace(f"\x00{i}a", en).replace(f"\x00{i}b", pt)
    if out == source:
        out = re.sub(r"^(def \w+\(.*\):)$", r"\1\n    # minha versao desta funcao", source, flags=re.M)
    return out.replace("Assignment 1 - masked attention", "Trabalho 1: atencao com mascara")


def reformatted(source: str) -> str:
    """The layout changed as a formatter would: spaces around operators, calls split over lines, quotes."""
    out = re.sub(r"(\w)\*\*(\w)", r"\1 ** \2", source)
    out = out.replace(", ", ",  ").replace("'", '"').replace("(\n", "(\n    ")
    out = re.sub(r"^(\s+)return (.+)$", r"\1return (\n\1    \2\n\1)", out, flags=re.M)
    return out.replace("\n\n\n", "\n\n\n\n")


def dead_code(source: str) -> str:
    """Prints in every function, an unused helper and a branch never taken: the copy grows by half."""
    out = re.sub(r"^(def (\w+)\((.*)\):)$", lambda m: f"{m.group(1)}\n    print('{m.group(2)} called')", source,
                 flags=re.M)
    extra = ("\n\ndef debug_shapes(*arrays):\n    for a in arrays:\n        print(np.shape(a), np.min(a), np.max(a))\n"
             "    return None\n\n\ndef check_rows(P):\n    total = 0.0\n    for line in P:\n        total +="
             " abs(sum(line) - 1)\n"
             "    if total > 1e-6:\n        print('rows do not sum to one', total)\n    return total < 1e-6\n"
             "\n\nif False:\n    debug_shapes(np.eye(3))\n    check_rows(np.eye(3))\n")
    return out.rstrip() + "\n" + extra


def rewritten(source: str, pick: tuple[int, ...], rng: random.Random) -> str:
    """One function (softmax, the longest to write) replaced by another way of writing it."""
    head, blocks = _blocks(source)
    at = FUNCTIONS.index("softmax")
    others = [p for p in range(len(PYTHON["softmax"])) if p != pick[at]]
    new = PYTHON["softmax"][rng.choice(others)].format(c="", ax="1", **STYLES[0])
    blocks = [b for b in blocks if not re.match(r"def (softmax|_stable_exp)\b", b)]
    return head + "".join(blocks).rstrip() + "\n\n\n" + new


def buggy(source: str) -> str:
    """The copy, with the mask's diagonal and the scaling slipped (the copier's own bugs)."""
    out = source.replace("k=1", "k=0").replace("triu_indices(", "tril_indices(").replace("np.sqrt(", "(")
    out = out.replace("math.sqrt(", "(").replace(" ** 0.5", "")
    return out


# What a student who copies part of a file writes alone: the short functions (the copied part is what they
# could not do: softmax, the mask in the weights, the heads).
EASY = ("project", "scaled_scores", "causal_mask", "attention_head")


def partial(source: str, pick: tuple[int, ...], rng: random.Random) -> str:
    """Four of the seven functions copied; three of the short ones written the student's own way."""
    head, blocks = _blocks(source)
    kept = []
    own = set(rng.sample(EASY, 3))
    for block in blocks:
        name = re.match(r"def (\w+)", block).group(1)
        target = "softmax" if name == "_stable_exp" else "multi_head_attention" if name == "one_head" else name
        if target in own:
            continue
        kept.append(block)
    for function in sorted(own, key=FUNCTIONS.index):
        p = pick[FUNCTIONS.index(function)]
        q = rng.choice([x for x in range(len(PYTHON[function])) if x != p])
        kept.append(python_habits(PYTHON[function][q].format(c="", ax="-1", **STYLES[3]), rng) + "\n\n")
    return head + "".join(kept).rstrip() + "\n"


def r_dead_code(source: str) -> str:
    out = re.sub(r"^((\w+) (?:<-|=) function\(.*\) \{)$", lambda m: f'{m.group(1)}\n  cat("{m.group(2)}\\n")', source,
                 flags=re.M)
    return out + ("\ndebug_dims <- function(...) {\n  for (a in list(...)) print(dim(a))\n  invisible(NULL)\n}\n"
                  "\nif (FALSE) {\n  debug_dims(diag(3))\n  print(rowSums(diag(3)))\n}\n")


def r_partial(source: str, pick: tuple[int, ...], rng: random.Random) -> str:
    head, blocks = _blocks(source, r=True)
    own = set(rng.sample(EASY, 3))
    kept = [b for b in blocks if re.match(r"(\w+)", b).group(1) not in own]
    for function in sorted(own, key=FUNCTIONS.index):
        p = pick[FUNCTIONS.index(function)]
        q = rng.choice([x for x in range(len(R[function])) if x != p])
        kept.append(r_habits(R[function][q].format(c="", **STYLES[2]), rng) + "\n")
    return head + "".join(kept).rstrip() + "\n"
