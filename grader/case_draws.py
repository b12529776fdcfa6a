"""Per-student cases that differ in their values, never in what they catch.

Each test's seeded cases (``grader.cases.DRAWS``) are drawn on a generator of their own, from the student's
seed, the test's place and an attempt number. A draw is kept only if it tells apart from the reference every
catalogued mistake (each variant of ``grader.mistakes.VARIANTS``, and the overflowing softmax on large cases)
that the test catches on the course's calibration draws: otherwise the next attempt is drawn, so the redraw
is as deterministic as the seed. Without it, a student whose large scores saturated both softmaxes would
pass a test a neighbour with a missing √d_k fails (issue 29: 13, 14 or 15 out of 30 for one file under ten
names).

"Told apart" is stricter than failing: the variant must miss the reference by more than MARGIN tolerances
on some entry (or give NaN, inf or another shape where the reference is finite), so that the same mistake
written in float32, or in another order of operations, fails the case too.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from grader import tolerance
from grader.mistakes import OVERFLOW, VARIANTS, NotApplicable

MARGIN = 4.0  # the tolerances by which a variant must miss the reference for a case to catch it
ATTEMPTS = 64  # draws tried before the one that catches the most is kept (none has needed more than a few)
CALIBRATION = 12  # draws per test whose catches define what every student's draw must catch
CALIBRATION_SEED = 29  # public: what a test catches is the course's, not a student's

# Every catalogued way of making a mistake, by a name of its own (an id may have several variants).
_CATALOGUE = tuple((f"{mistake}#{i}", variant) for i, (mistake, variant) in enumerate(VARIANTS))
_CATALOGUE += (("softmax-overflow", OVERFLOW),)


def _caught(case, among: frozenset[str] | None = None) -> frozenset[str]:
    """The catalogued variants (of ``among``, default all) this one case tells apart from the reference."""
    expected = case.reference_output()
    tol = MARGIN * tolerance.tolerance(case.function, case.args, case.kwargs, expected)
    caught = set()
    for name, variant in _CATALOGUE:
        if among is not None and name not in among:
            continue
        try:
            with np.errstate(all="ignore"):
                out = variant.run(case.function, case.args, case.kwargs)
        except (NotApplicable, ValueError, IndexError):
            continue
        if not tolerance.passes(out, expected, tol):
            caught.add(name)
    return frozenset(caught)


def caught_by(cases, among: frozenset[str] | None = None) -> frozenset[str]:
    """The variants (of ``among``, default all) a test with these cases catches: any one of its cases failing
    fails the whole test. With ``among``, a variant already caught is not looked for again."""
    caught: frozenset[str] = frozenset()
    for case in cases:
        if among is not None and among <= caught:
            break
        caught |= _caught(case, None if among is None else among - caught)
    return caught


def _rng(seed: int, place: int, attempt: int) -> np.random.Generator:
    return np.random.default_rng([seed, place, attempt])


@cache
def required(place: int, draw: Callable) -> frozenset[str]:
    """What the test at ``place`` must catch on every student's draw: whatever it catches on any of the
    calibration draws (a variant no draw of the test can show, such as a mask mistake in a softmax, is not
    asked for)."""
    return frozenset().union(*(caught_by(draw(_rng(CALIBRATION_SEED, place, k))) for k in range(CALIBRATION)))


def kept_draw(seed: int, place: int, function: str, group: str, draw: Callable) -> list:
    """The first draw of this test, for this seed, that catches every variant it must; after ATTEMPTS, the
    first that catches the most."""
    must = required(place, draw)
    best, best_missing = None, None
    for attempt in range(ATTEMPTS):
        cases = draw(_rng(seed, place, attempt))
        missing = len(must - caught_by(cases, must))
        if missing == 0:
            return cases
        if best_missing is None or missing < best_missing:
            best, best_missing = cases, missing
    return best
