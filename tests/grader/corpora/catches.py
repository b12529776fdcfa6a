"""What a test's cases catch: which catalogued variants they tell apart from the reference, and whether any
case is ambiguous on one.

Every student's cases have the same shapes, edge cases and planted features (``grader.functions.cases``), only their
values differ; ``tests/grader/test_same_grade.py`` checks with this that they also catch the same catalogued
variants (each variant of ``grader.functions.mistakes.VARIANTS``, the overflowing softmax and float16 arithmetic) for
every identity, with no ambiguous case.

"Caught" is stricter than failing: the variant must miss the reference by more than CLEAR tolerances on some
entry (or give NaN, inf or another shape where the reference is finite), so that the same mistake written in
float32, or in another order of operations, fails the case too; a case is ambiguous for a variant that misses
by more than nothing but less than CLEAR, where that same mistake could pass or fail.
"""

from __future__ import annotations

import numpy as np

from grader import tolerance
from grader.functions.mistakes import OVERFLOW, VARIANTS, NotApplicable
from mha import reference

CLEAR = 10.0  # a case catches a variant when the variant misses the reference by more than this many tolerances,
UNCHANGED = 1e-9  # and cannot see it when it misses by less than this share of one; between the two, ambiguous
PRECISION = "float16"  # the half-precision probe: caught wherever it is caught for the public seed, never "ambiguous"


def _half(value):
    """An input as float16 holds it (arrays, and lists of them); sizes and flags as they are."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float16).astype(np.float64)
    if isinstance(value, (list, tuple)):
        return type(value)(_half(v) for v in value)
    return value


class _HalfPrecision:
    """The reference on inputs rounded to float16, its result rounded too: code computing in float16. Not a
    mistake the grader names, but a test must catch it for every student or for none (a softmax of saturated
    ±1000 scores is exact even in float16: the large cases' near tie is what catches it)."""

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
