"""Per-student cases that differ in their values, never in what they catch.

Each test's seeded cases (``grader.cases.DRAWS``) are drawn on a generator of their own, from the student's
seed, the test's place and an attempt number. A draw is kept only if it tells apart from the reference every
catalogued mistake (each variant of ``grader.mistakes.VARIANTS``, and the overflowing softmax on large cases)
that the test catches on the course's calibration draws: otherwise the next attempt is drawn, so the redraw
is as deterministic as the seed. Without it, a student whose large scores saturated both softmaxes would
pass a test a neighbour with a missing √d_k fails (13, 14 or 15 out of 30 for one file under ten names,
measured).

"Caught" is stricter than failing: the variant must miss the reference by more than CLEAR tolerances on some
entry (or give NaN, inf or another shape where the reference is finite), so that the same mistake written in
float32, or in another order of operations, fails the case too; and no case of a kept draw may be ambiguous
for any variant (missing by more than nothing but less than CLEAR), where that same mistake could pass or fail.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from grader import tolerance
from grader.mistakes import OVERFLOW, VARIANTS, NotApplicable
from mha import reference

CLEAR = 10.0  # a case catches a variant when the variant misses the reference by more than this many tolerances,
UNCHANGED = 1e-9  # and cannot see it when it misses by less than this share of one; between the two, the case is
# ambiguous (the same mistake written in float32 may pass it or not), and a draw with an ambiguous case is redrawn
ATTEMPTS = 64  # draws tried before the one that misses the fewest is kept (measured: a few at most)
CALIBRATION = 12  # draws per test whose catches define what every student's draw must catch
CALIBRATION_SEED = 29  # public: what a test catches is the course's, not a student's
PRECISION = "float16"  # the half-precision probe: must be caught where calibration catches it, never "ambiguous"



def _half(value):
    """An input as float16 holds it (arrays, and lists of them); sizes and flags as they are."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float16).astype(np.float64)
    if isinstance(value, (list, tuple)):
        return type(value)(_half(v) for v in value)
    return value


class _HalfPrecision:
    """The reference on inputs rounded to float16, its result rounded too: code computing in float16. Not a
    mistake the grader names, but a test must catch it on every draw it is caught on in calibration (a softmax
    of saturated ±1000 scores is exact even in float16), or float16 code would pass by the student's name."""

    def run(self, function: str, args: tuple, kwargs: dict) -> np.ndarray:
        out = getattr(reference, function)(*_half(args), **kwargs)
        return np.asarray(out, dtype=np.float64).astype(np.float16).astype(np.float64)


# Every catalogued way of making a mistake, by a name of its own (an id may have several variants).
_CATALOGUE = tuple((f"{mistake}#{i}", variant) for i, (mistake, variant) in enumerate(VARIANTS))
_CATALOGUE += (("softmax-overflow", OVERFLOW), (PRECISION, _HalfPrecision()))


def _misses(out: np.ndarray, expected: np.ndarray, tol: float) -> float:
    """By how many tolerances ``out`` misses ``expected`` (inf for another shape, or NaN/inf where it is finite)."""
    if out.shape != expected.shape:
        return np.inf
    finite = np.isfinite(expected)
    if not np.array_equal(out[~finite], expected[~finite]) or not np.all(np.isfinite(out[finite])):
        return np.inf
    return float(np.abs(out[finite] - expected[finite]).max(initial=0.0)) / tol


def seen(case) -> tuple[frozenset[str], frozenset[str]]:
    """The catalogued variants this case catches, and those it is ambiguous on."""
    expected = case.reference_output()
    tol = tolerance.tolerance(case.function, case.args, case.kwargs, expected)
    caught, ambiguous = set(), set()
    for name, variant in _CATALOGUE:
        try:
            with np.errstate(all="ignore"):
                out = variant.run(case.function, case.args, case.kwargs)
        except (NotApplicable, ValueError, IndexError):
            continue
        misses = _misses(out, expected, tol)
        if misses > CLEAR:
            caught.add(name)
        elif misses > UNCHANGED and name != PRECISION:  # float16 rounding moves nearly every case a little
            ambiguous.add(name)
    return frozenset(caught), frozenset(ambiguous)


def caught_by(cases) -> tuple[frozenset[str], bool]:
    """The variants a test with these cases catches (any one of its cases failing fails the whole test), and
    whether the test is ambiguous: a case ambiguous on some variant, or, on large scores (where a saturated
    softmax hides a wrong scale on some rows and not others), a variant no case catches and some case is
    ambiguous on."""
    caught, ambiguous, large_unclear = frozenset(), False, frozenset()
    for case in cases:
        more, unclear = seen(case)
        caught = caught | more
        if case.group == "large":
            large_unclear |= unclear
        else:
            ambiguous = ambiguous or bool(unclear)
    return caught, ambiguous or bool(large_unclear - caught)


def _rng(seed: int, place: int, attempt: int) -> np.random.Generator:
    return np.random.default_rng([seed, place, attempt])


@cache
def required(place: int, draw: Callable) -> frozenset[str]:
    """What the test at ``place`` must catch on every student's draw: whatever it catches on any of the
    calibration draws (a variant no draw of the test can show, such as a mask mistake in a softmax, is not
    asked for)."""
    return frozenset().union(*(caught_by(draw(_rng(CALIBRATION_SEED, place, k)))[0] for k in range(CALIBRATION)))


def kept_draw(seed: int, place: int, function: str, group: str, draw: Callable) -> list:
    """The first draw of this test, for this seed, that catches every variant it must and has no ambiguous case;
    after ATTEMPTS, the first that misses the fewest."""
    must = required(place, draw)
    best, best_missing = None, None
    for attempt in range(ATTEMPTS):
        cases = draw(_rng(seed, place, attempt))
        caught, ambiguous = caught_by(cases)
        missing = (len(must - caught), ambiguous)
        if missing == (0, False):
            return cases
        if best_missing is None or missing < best_missing:
            best, best_missing = cases, missing
    return best
