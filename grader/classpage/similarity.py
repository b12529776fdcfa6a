"""Hand-ins that are unusually close: copydetect's winnowing over normalised code, the template left out.

copydetect (Stanford MOSS's method: Schleimer, Wilkerson and Aiken, "Winnowing", SIGMOD 2003) tokenises each
file with Pygments, writes every name as V, every function name as F, every string as S, drops comments and
whitespace, and keeps a winnowed set of hashes of its k-character substrings. The hashes of the starter file
(``grader.template``, both questions, both languages) are boilerplate and never count. A pair's score is the
share of each file's fingerprinted code found in the other, the smaller of the two: a file copied into a
larger one of the student's own scores as the share of that larger file, so a short common helper does not
flag two long hand-ins. It is evidence to look at, never a verdict: short, correct code written from the same
lecture can look alike.
"""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass

from grader import template
from grader.messages import LANGS

NOISE = 25  # k: shorter common runs of normalised code are never counted (copydetect's default)
GUARANTEE = 30  # a common run this long is always found (copydetect's default): the winnowing window
WINDOW = GUARANTEE - NOISE + 1
DEFAULT_THRESHOLD = 0.8
MIN_FINGERPRINTS = 10  # a hand-in with less of its own code than this (the bare template) is never compared


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    score: float  # the smaller of the two shares, in [0, 1]
    shares: tuple[float, float]
    first_source: str
    second_source: str
    first_spans: list[tuple[int, int]]  # character ranges of each source found in the other
    second_spans: list[tuple[int, int]]


def _fingerprint(source: str, boilerplate=None):
    from copydetect import CodeFingerprint  # imports matplotlib: loaded only when a class page is made

    return CodeFingerprint("handin.py", NOISE, WINDOW, boilerplate=boilerplate, fp=io.StringIO(source),
                           language="python")


def boilerplate() -> list[int]:
    """The fingerprints of every starter file the course hands out."""
    hashes: set[int] = set()
    for lang, contract in itertools.product(LANGS, ("functions", "module")):
        hashes |= _fingerprint(template.render(lang, contract)).hashes
    return sorted(hashes)


def _spans(slices) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in zip(slices[0], slices[1], strict=True)] if len(slices) else []


def close_pairs(sources: dict[str, str], threshold: float = DEFAULT_THRESHOLD) -> list[Pair]:
    """Every pair of hand-ins scoring at least ``threshold``, highest first."""
    from copydetect import compare_files

    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"the similarity threshold is {threshold}; give a share in (0, 1], e.g. {DEFAULT_THRESHOLD}")
    common = boilerplate()
    prints = {name: _fingerprint(code, common) for name, code in sources.items()}
    prints = {name: fp for name, fp in prints.items() if len(fp.hashes) >= MIN_FINGERPRINTS}
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        if not prints[a].hashes & prints[b].hashes:
            continue  # nothing in common: no need for the full comparison
        _, (share_a, share_b), (slices_a, slices_b) = compare_files(prints[a], prints[b])
        score = float(min(share_a, share_b))
        if score >= threshold:
            pairs.append(Pair(a, b, score, (float(share_a), float(share_b)), sources[a], sources[b],
                              _spans(slices_a), _spans(slices_b)))
    return sorted(pairs, key=lambda p: (-p.score, p.first, p.second))
