"""Hand-ins that are unusually close: shared fingerprints of normalised code, weighted by how rare they are.

Each hand-in's fingerprints (``fingerprints``: winnowed hashes of its tokens, names, comments and layout set
aside) are compared with those of every other hand-in in the same language: R with R, Python with Python. The
starter files' own runs never count. What a whole class shares says little (the assignment is short and correct
answers converge); what two hand-ins alone share says much. So each fingerprint weighs
``log((N + 1) / n)``, ``N`` the hand-ins of that language and ``n`` those holding it: a run all of them have
weighs almost nothing, one only two have weighs nearly the most. A pair's two shares are the weight of each
file's fingerprints found in the other over the weight of all of its own; its score is the larger, so a copy
padded with code of its own, or a copy of part of a file, is not hidden by what was added. Everything is
deterministic: hashes are BLAKE2b, files are taken in the order of their names, weights are summed as integers.
It is evidence to look at, never a verdict.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import defaultdict
from dataclasses import dataclass

from grader import template
from grader.classpage import DEFAULT_THRESHOLD
from grader.classpage.fingerprints import Fingerprints, fingerprint, kgram_hashes, tokens
from grader.messages import LANGS
from grader.module.contract import Contract

MIN_FINGERPRINTS = 10  # a hand-in with less of its own code than this (the bare template) is never compared
LANGUAGES = template.LANGUAGES


@dataclass(frozen=True)
class Code:
    """One hand-in's graded code and its language ("python" or "r")."""

    source: str
    language: str = "python"


@dataclass(frozen=True)
class Pair:
    first: str  # the two names in order
    second: str
    score: float  # the larger of the two shares, in [0, 1]
    shares: tuple[float, float]  # the share of first's code found in second, and of second's found in first
    first_spans: list[tuple[int, int]]  # character ranges of each source found in the other
    second_spans: list[tuple[int, int]]


@functools.cache
def boilerplate(language: str) -> frozenset[int]:
    """Every run of tokens of every starter file the course hands out in ``language``: never counted."""
    if language == "r":
        starters = [template.render_r(lang) for lang in LANGS]
    else:
        starters = [template.render(lang, contract) for lang in LANGS
                    for contract in (Contract.FUNCTIONS, Contract.MODULE)]
    return frozenset(h for starter in starters for h in kgram_hashes(tokens(starter, language)))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _as_code(code: Code | str) -> Code:
    return code if isinstance(code, Code) else Code(code)


def ranking(codes: dict[str, Code | str], threshold: float = 0.0) -> list[Pair]:
    """Every pair of hand-ins of one language sharing any fingerprint and scoring at least ``threshold``, highest
    score first (then the larger smaller share: a copy of the whole file before a file contained in another)."""
    codes = {name: _as_code(code) for name, code in codes.items()}
    pairs: list[Pair] = []
    for language in LANGUAGES:
        common = boilerplate(language)
        prints = {name: fingerprint(codes[name].source, language, common)
                  for name in sorted(codes) if codes[name].language == language}
        prints = {name: fp for name, fp in prints.items() if len(fp.spans) >= MIN_FINGERPRINTS}
        pairs += _pairs(prints, threshold)
    return sorted(pairs, key=lambda p: (-p.score, -min(p.shares), p.first, p.second))


def _weight(files: int, holding: int) -> float:
    """A fingerprint's weight: log((N + 1) / n), N hand-ins of which n hold it (never 0, so two alone compare)."""
    return math.log((files + 1) / holding)


SCALE = 2**32  # weights are summed as integers of this many parts: exact, so the same in any order


def _pairs(prints: dict[str, Fingerprints], threshold: float = 0.0) -> list[Pair]:
    """The pairs sharing any fingerprint and scoring at least ``threshold``, each with its spans."""
    holders: dict[int, list[str]] = defaultdict(list)
    for name in sorted(prints):
        for h in prints[name].spans:
            holders[h].append(name)
    n = len(prints)
    weight = {h: round(_weight(n, len(names)) * SCALE) for h, names in holders.items()}
    own = {name: sum(weight[h] for h in fp.spans) for name, fp in prints.items()}
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for h, names in holders.items():
        for a, b in itertools.combinations(names, 2):  # names in order: holders were filled in order
            shared[a, b] += weight[h]
    pairs = []
    for (a, b), common in sorted(shared.items()):
        shares = (common / own[a], common / own[b])
        if max(shares) < threshold:
            continue
        hashes = prints[a].spans.keys() & prints[b].spans.keys()
        pairs.append(Pair(a, b, max(shares), shares, _merged([s for h in hashes for s in prints[a].spans[h]]),
                          _merged([s for h in hashes for s in prints[b].spans[h]])))
    return pairs


def close_pairs(codes: dict[str, Code | str], threshold: float = DEFAULT_THRESHOLD) -> list[Pair]:
    """Every pair of hand-ins scoring at least ``threshold``, highest first."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"the similarity threshold is {threshold}; give a share in (0, 1], e.g. {DEFAULT_THRESHOLD}")
    return ranking(codes, threshold)
