"""Known mistakes, detected by behaviour: the reference with one mistake injected.

A ``Variant`` composes the seven functions from ``mha.reference``'s pieces; each mistaken variant
swaps one piece (the softmax, the scale, the mask, how the mask is applied, the concatenation, ...).
A mistake is named only from evidence: the variant's output explains every failing case of a function
(see ``explains``: NaN against NaN never counts) and no other variant explains them as well
(``diagnose``). Source code is never read. The pieces take the cases' inputs as they are: float64
arrays (and lists of them), never a student's values.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from grader import tolerance
from grader.functions.contract import MISTAKE_IDS
from mha import reference


class NotApplicable(Exception):
    """This variant cannot say anything about this call (e.g. √d_model without d_model)."""


def softmax_or_nan(S) -> np.ndarray:
    """The reference softmax, but a row with no finite score gives NaN (as numpy's 0/0 does) instead of raising."""
    try:
        return reference.softmax(S)
    except ValueError:
        with np.errstate(all="ignore"):
            exp = np.exp(S - S.max(axis=1, keepdims=True))
            return exp / exp.sum(axis=1, keepdims=True)


def _softmax_columns(S) -> np.ndarray:
    return softmax_or_nan(S.T).T


def _softmax_whole(S) -> np.ndarray:
    finite = S[np.isfinite(S)]
    with np.errstate(all="ignore"):
        exp = np.exp(S - (finite.max() if finite.size else 0.0))  # shifted by the largest score, as a student does
        return exp / exp.sum()


def _softmax_naive(S) -> np.ndarray:
    with np.errstate(all="ignore"):
        exp = np.exp(S)
        return exp / exp.sum(axis=1, keepdims=True)


def _softmax_transposed(S) -> np.ndarray:
    """Each row's softmax returned as a column (R's apply(S, 1, f) without t())."""
    return softmax_or_nan(S).T


def _softmax_skipping_last_row(S) -> np.ndarray:
    """A row loop that stops one row early (R's 1:(nrow(S) - 1), Python's range(n - 1)): the last row keeps its
    scores. With one row, R's 1:0 still visits row 1, and the result is right."""
    A = softmax_or_nan(S)
    if S.shape[0] > 1:
        A[-1] = S[-1]
    return A


def _future(n: int) -> np.ndarray:
    return np.triu(np.ones((n, n), dtype=bool), k=1)  # True where j > i


@dataclass(frozen=True)
class Variant:
    """The seven student functions, composed from replaceable pieces (defaults: the reference)."""

    softmax: Callable = softmax_or_nan
    # The divisor of Q Kᵀ, from d_k and (when known) d_model.
    scale: Callable[[int, int | None], float] = lambda d_k, d_model: math.sqrt(d_k)
    transpose_scores: bool = False
    # How Q meets K: "matrix" Q Kᵀ; "elementwise" Q * K (R's * for %*%); "crossprod" Qᵀ K (R's crossprod(Q, K)
    # where tcrossprod(Q, K) is meant)
    score_product: str = "matrix"
    causal_mask: Callable[[int], np.ndarray] = reference.causal_mask
    # How the mask meets the scores before the softmax, and what happens to A after it.
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray] = lambda S, M: S + M
    after_softmax: Callable[[np.ndarray], np.ndarray] = lambda A: A
    apply_mask: bool = True
    concat: Callable[[list[np.ndarray]], np.ndarray] = lambda heads: np.concatenate(heads, axis=1)
    output_projection: bool = True
    share_weights: bool = False

    def project(self, X, W):
        return reference.project(X, W)

    def scaled_scores(self, Q, K, d_model: int | None = None):
        d_k = Q.shape[1]
        # Built from the reference's scores, undoing its √d_k to apply this variant's divisor.
        raw = reference.scaled_scores(K, Q) if self.transpose_scores else reference.scaled_scores(Q, K)
        if self.score_product == "elementwise":
            raw = np.asarray(Q) * np.asarray(K) / math.sqrt(d_k)  # (n, d_k): entry by entry
        elif self.score_product == "crossprod":
            raw = np.asarray(Q).T @ np.asarray(K) / math.sqrt(d_k)  # (d_k, d_k)
        return raw * math.sqrt(d_k) / self.scale(d_k, d_model)

    def attention_weights(self, Q, K, causal=True, d_model=None):
        S = self.scaled_scores(Q, K, d_model)  # (n, n)
        if causal and self.apply_mask:
            n = S.shape[0]
            with np.errstate(all="ignore"):
                A = self.softmax(self.combine(S, self.causal_mask(n)))
            return self.after_softmax(A)
        return self.softmax(S)

    def attention_head(self, Q, K, V, causal=True, d_model=None):
        with np.errstate(all="ignore"):
            return self.attention_weights(Q, K, causal, d_model) @ V  # (n, d_v)

    def multi_head_attention(self, X, W_Q, W_K, W_V, W_O, causal=True):
        d_model = X.shape[1]
        heads = []
        for i in range(len(W_Q)):
            j = 0 if self.share_weights else i
            Q, K, V = self.project(X, W_Q[j]), self.project(X, W_K[j]), self.project(X, W_V[j])
            heads.append(self.attention_head(Q, K, V, causal, d_model))
        C = self.concat(heads)  # (n, h·d_v)
        if not self.output_projection:
            return C
        with np.errstate(all="ignore"):
            return C @ W_O  # (n, d_model)

    def run(self, function: str, args: tuple, kwargs: dict) -> np.ndarray:
        return np.asarray(getattr(self, function)(*args, **kwargs), dtype=np.float64)


def _sqrt_d_model(d_k, d_model):
    if d_model is None:
        raise NotApplicable
    return math.sqrt(d_model)


def _vstack_reshaped(heads):
    n, d_v = heads[0].shape
    return np.concatenate(heads, axis=0).reshape(n, len(heads) * d_v)  # rows stacked, then forced to (n, h·d_v)


REF = Variant()

# Each identifier with one or more ways of making that mistake.
VARIANTS: tuple[tuple[str, Variant], ...] = (
    ("softmax-wrong-axis", replace(REF, softmax=_softmax_columns)),
    ("softmax-wrong-axis", replace(REF, softmax=_softmax_whole)),
    ("softmax-transposed", replace(REF, softmax=_softmax_transposed)),
    ("loop-skips-last-row", replace(REF, softmax=_softmax_skipping_last_row)),
    ("missing-scale", replace(REF, scale=lambda d_k, d_model: 1.0)),
    ("wrong-scale", replace(REF, scale=lambda d_k, d_model: float(d_k))),
    ("wrong-scale", replace(REF, scale=_sqrt_d_model)),
    ("scores-transposed", replace(REF, transpose_scores=True)),
    ("elementwise-product", replace(REF, score_product="elementwise")),
    ("scores-crossprod", replace(REF, score_product="crossprod")),
    ("mask-not-applied", replace(REF, apply_mask=False)),
    ("mask-inverted", replace(REF, causal_mask=lambda n: reference.causal_mask(n).T)),
    ("mask-excludes-diagonal",
     replace(REF, causal_mask=lambda n: np.where(np.triu(np.ones((n, n), bool)), -np.inf, 0.0))),
    ("mask-not-additive", replace(REF, causal_mask=lambda n: _future(n).astype(float))),  # 1 where masked
    ("mask-not-additive", replace(REF, causal_mask=lambda n: (~_future(n)).astype(float))),  # 1 where allowed
    ("mask-not-additive", replace(REF, causal_mask=lambda n: (~_future(n)).astype(float), combine=lambda S, M: S * M)),
    ("mask-after-softmax", replace(REF, combine=lambda S, M: S, after_softmax=lambda A: A * ~_future(A.shape[0]))),
    ("concat-wrong-axis", replace(REF, concat=_vstack_reshaped)),
    ("heads-concat-order", replace(REF, concat=lambda heads: np.concatenate(heads[::-1], axis=1))),  # last first
    ("missing-output-projection", replace(REF, output_projection=False)),
    ("heads-share-weights", replace(REF, share_weights=True)),
)


# Not a variant: exp overflow is named from behaviour (see ``diagnose``), never by matching NaN to NaN.
OVERFLOW = replace(REF, softmax=_softmax_naive)


def explains(got: np.ndarray, want: np.ndarray, expected: np.ndarray, tol: float) -> bool:
    """A variant's output ``want`` explains the student's ``got`` on one case: same shape, every entry
    close except where both are NaN, and at least one finite entry where the variant differs from the
    reference and the student agrees with the variant. NaN against NaN is never evidence."""
    if got.shape != want.shape:
        return False
    both_nan = np.isnan(got) & np.isnan(want)
    agree = tolerance.close(got, want, tol)
    if not np.all(agree | both_nan):
        return False
    if want.shape != expected.shape:
        return bool(np.any(agree & np.isfinite(want)))  # a different shape is itself the evidence
    differs = ~tolerance.close(want, expected, tol) & ~np.isnan(want)
    return bool(np.any(agree & differs))


def explaining(
    function: str, args: tuple, kwargs: dict, got: np.ndarray, expected: np.ndarray, tol: float
) -> frozenset[str]:
    """The identifiers of every variant whose output explains the student's on this case."""
    found = set()
    for mistake_id, variant in EVIDENCE:
        try:
            want = variant.run(function, args, kwargs)
        except (NotApplicable, ValueError, IndexError):
            continue
        if explains(got, want, expected, tol):
            found.add(mistake_id)
    if function == "scaled_scores" and not found and _off_by_a_constant(got, expected):
        found.add("wrong-scale")
    return frozenset(found)


def _off_by_a_constant(got: np.ndarray, expected: np.ndarray) -> bool:
    """Scores off by one positive constant factor other than 1: a wrong scale, whatever the divisor was.

    Only when no variant explains them: the factor √d_k is the missing-scale variant's to explain, so
    that each name has one mechanism (this one never says missing-scale)."""
    if got.shape != expected.shape or not (np.all(np.isfinite(got)) and np.any(np.abs(expected) > 1e-9)):
        return False
    c = float(np.vdot(got, expected) / np.vdot(expected, expected))
    return c > 1e-6 and abs(c - 1) >= 1e-4 and bool(np.allclose(got, c * expected, rtol=1e-5, atol=1e-8))


@dataclass(frozen=True)
class Failure:
    """The evidence one failing case leaves: which variants explain it and whether it overflowed."""

    function: str
    group: str  # worked | hidden | large
    explained_by: frozenset[str] = frozenset()
    overflowed: bool = False  # inf/NaN where the reference is finite, or OverflowError raised


def diagnose(failures: list[Failure]) -> dict[str, tuple[str, ...]]:
    """The mistakes to name, per function, from every failing case of one submission.

    A function gets a name only when that one variant explains every one of its failing cases; when
    several do, only one that another function pins down alone. softmax-overflow is named only when
    the student's own softmax is right on ordinary inputs and gives inf/NaN on large ones, and the
    function's failures are all large cases that overflowed."""
    by_function: dict[str, list[Failure]] = {}
    for failure in failures:
        by_function.setdefault(failure.function, []).append(failure)
    explained = {f: frozenset.intersection(*(x.explained_by for x in fs)) for f, fs in by_function.items()}
    pinned = {m for ids in explained.values() if len(ids) == 1 for m in ids}
    softmax = by_function.get("softmax", [])
    softmax_overflows = bool(softmax) and all(x.group == "large" and x.overflowed for x in softmax)
    named: dict[str, tuple[str, ...]] = {}
    for function, ids in explained.items():
        if len(ids) > 1:
            ids = ids & pinned
        if len(ids) != 1:
            ids = frozenset()
        if not ids and softmax_overflows and all(x.group == "large" and x.overflowed for x in by_function[function]):
            ids = frozenset({"softmax-overflow"})
        named[function] = tuple(m for m in MISTAKE_IDS if m in ids)
    return named


# ------------------------------------------------------------------------------------------ R's idioms
# The catalogue's mistakes as R's semantics make them (tests/grader/corpora/r_idioms: each beside its Python twin): the
# same name where R gives a value none of VARIANTS does (a dropped dimension, recycling, column-major filling).
# Each differs from its VARIANTS sibling only where R's semantics do, always by a shape or by far, so the cases
# (the same shapes for every student, grader.functions.cases) need not be chosen to tell them apart.


def _softmax_loop_from_zero(S) -> np.ndarray:
    """for (i in 1:nrow(S)-1): R reads 1:n-1 as (1:n) - 1, so the loop visits rows 0 (none) to n - 1 and the
    last row keeps its scores even when it is the only one (Python's range(n - 1) does the same)."""
    A = softmax_or_nan(S)
    A[-1] = S[-1]
    return A


def _softmax_apply_dropping(S) -> np.ndarray:
    """apply(S, 1, f) without t(): each row's result as a column, and for a one-column S (a 1 x 1 one included)
    each result has length 1, so apply returns a plain vector of length nrow(S)."""
    A = softmax_or_nan(S).T
    return A[0] if A.shape[0] == 1 else A


def _softmax_apply_over_columns(S) -> np.ndarray:
    """apply(S, 2, f): each column's softmax, and for a one-row S (a 1 x 1 one included) a plain vector."""
    A = _softmax_columns(S)
    return A[0] if A.shape[0] == 1 else A


def _exp_rows_shifted(S) -> np.ndarray:
    """exp(S - apply(S, 1, max)): R recycles the row maxima down the columns, each row shifted by its own."""
    top = S.max(axis=1, keepdims=True)
    return np.exp(S - np.where(np.isfinite(top), top, 0.0))


def _exp_shifted(S) -> np.ndarray:
    """exp(S - max(S)), one shift for the whole matrix (as exp(S) gives, where it does not overflow)."""
    finite = S[np.isfinite(S)]
    return np.exp(S - (finite.max() if finite.size else 0.0))


def _recycled(values: np.ndarray, shape: tuple, order: str) -> np.ndarray:
    """``values`` repeated to fill ``shape`` as R recycles a vector: down the columns ("F": E / v) or along the
    rows ("C": sweep(E, 2, v) and t(t(E) / v))."""
    return np.resize(values, shape[::-1]).T if order == "F" else np.resize(values, shape)


def _softmax_sums(exp: Callable, sums: int, order: str) -> Callable:
    """A softmax that divides exp(S) by the wrong sums: rowSums (``sums`` 1) or colSums (0), recycled in
    ``order``. E / colSums(E) divides row i by column i's sum; sweep(E, 2, rowSums(E), "/"), like Python's
    E / E.sum(axis=1) without keepdims, divides column j by row j's sum."""
    def softmax(S):
        with np.errstate(all="ignore"):
            E = exp(S)
            return E / _recycled(E.sum(axis=sums), E.shape, order)
    return softmax


def _concat_by_rows(heads) -> np.ndarray:
    """matrix(unlist(heads), nrow = n, byrow = TRUE): each head's entries column by column, laid along the rows."""
    n = heads[0].shape[0]
    return np.concatenate([h.ravel(order="F") for h in heads]).reshape(n, -1)


def _concat_interleaved(heads) -> np.ndarray:
    """matrix(do.call(rbind, heads), nrow = n): column k of the result is column k %/% h of head k %% h."""
    return np.stack(heads, axis=2).reshape(heads[0].shape[0], -1)


@dataclass(frozen=True)
class _KtQ(Variant):
    """crossprod(K, Q), i.e. t(K) %*% Q, for tcrossprod(Q, K): the (d_k, d_k) transpose of crossprod(Q, K)."""

    def scaled_scores(self, Q, K, d_model: int | None = None):
        return np.asarray(K).T @ np.asarray(Q) / self.scale(Q.shape[1], d_model)


R_VARIANTS: tuple[tuple[str, Variant], ...] = (
    ("softmax-wrong-axis", replace(REF, softmax=_softmax_sums(_exp_rows_shifted, 0, "F"))),
    ("softmax-wrong-axis", replace(REF, softmax=_softmax_sums(_exp_shifted, 0, "F"))),
    ("softmax-wrong-axis", replace(REF, softmax=_softmax_sums(_exp_rows_shifted, 1, "C"))),
    ("softmax-wrong-axis", replace(REF, softmax=_softmax_sums(_exp_shifted, 1, "C"))),
    ("softmax-wrong-axis", replace(REF, softmax=_softmax_apply_over_columns)),
    ("softmax-transposed", replace(REF, softmax=_softmax_apply_dropping)),
    ("loop-skips-last-row", replace(REF, softmax=_softmax_loop_from_zero)),
    ("scores-crossprod", _KtQ()),
    ("mask-inverted",  # M[lower.tri(M, diag = TRUE)] <- -Inf: the past and the token itself hidden
     replace(REF, causal_mask=lambda n: np.where(np.tril(np.ones((n, n), bool)), -np.inf, 0.0))),
    ("concat-wrong-axis", replace(REF, concat=_concat_by_rows)),
    ("concat-wrong-axis", replace(REF, concat=_concat_interleaved)),
)
# What a failing case is compared with: every variant, the catalogue's and R's.
EVIDENCE: tuple[tuple[str, Variant], ...] = VARIANTS + R_VARIANTS
