"""Verify the worked example: reference vs published numbers vs PyTorch's attention."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mha import crosscheck, worked_example
from mha.artifacts.worked import HeadSteps, PublishedCheck, WorkedExampleRecord, WorkedInputs
from mha.reference import MultiHeadTrace

# float64 implementations of the same arithmetic agree to a few ulps.
IMPLEMENTATION_TOLERANCE = 1e-12


def as_list(matrix) -> list:
    return np.asarray(matrix).tolist()


def masked(matrix: np.ndarray) -> list:
    """A matrix with −inf as None: JSON has no infinity."""
    return [[None if np.isneginf(v) else v for v in row] for row in matrix.tolist()]


@dataclass(frozen=True)
class VerificationResult:
    example: worked_example.WorkedExample
    trace: MultiHeadTrace
    comparisons: list[worked_example.Comparison]
    disagreements: dict[str, float]  # implementation -> max |difference| from the reference

    @property
    def published_passed(self) -> bool:
        return all(c.passed for c in self.comparisons)

    @property
    def implementations_agree(self) -> bool:
        return max(self.disagreements.values()) <= IMPLEMENTATION_TOLERANCE

    @property
    def passed(self) -> bool:
        return self.published_passed and self.implementations_agree

    def metrics(self) -> dict:
        """The summary `dvc metrics show` prints; every matrix's verdict is in record()."""
        return {
            "passed": self.passed,
            "max_deviation": max(c.max_abs_deviation for c in self.comparisons),
            "max_disagreement": max(self.disagreements.values()),
        }

    def record(self) -> WorkedExampleRecord:
        """Every input, intermediate and verdict, for the report."""
        ex, t = self.example, self.trace
        return WorkedExampleRecord(
            tokens=list(ex.tokens),
            inputs=WorkedInputs(X=as_list(ex.X), W_Q=[as_list(w) for w in ex.W_Q], W_K=[as_list(w) for w in ex.W_K],
                                W_V=[as_list(w) for w in ex.W_V], W_O=as_list(ex.W_O)),
            heads=[
                HeadSteps(Q=as_list(h.Q), K=as_list(h.K), V=as_list(h.V), S=as_list(h.S), M=masked(h.M),
                          S_masked=masked(h.S_masked), A=as_list(h.A), output=as_list(h.output))
                for h in t.heads
            ],
            concat=as_list(t.concat),
            output=as_list(t.output),
            checks={
                c.matrix: PublishedCheck(computed=as_list(c.computed), published=as_list(c.published),
                                         max_abs_deviation=c.max_abs_deviation, passed=c.passed)
                for c in self.comparisons
            },
            implementations=dict(self.disagreements),
            passed=self.passed,
            published_tolerance=worked_example.PUBLISHED_TOLERANCE,
            implementation_tolerance=IMPLEMENTATION_TOLERANCE,
        )

    def summary_lines(self) -> list[str]:
        """One verdict per published matrix, then one per implementation."""
        lines = [f"{_verdict(c.passed)}  {c.matrix:<16} max |computed - published| = {c.max_abs_deviation:.2e}"
                 for c in self.comparisons]
        lines += [f"{_verdict(d <= IMPLEMENTATION_TOLERANCE)}  reference vs {name}: max |difference| = {d:.2e}"
                  for name, d in self.disagreements.items()]
        return lines

    def problems(self) -> list[str]:
        found = [m.line() for c in self.comparisons for m in c.mismatches]
        found += [f"reference and {name} disagree by {d:.3e} (tolerance {IMPLEMENTATION_TOLERANCE:g})"
                  for name, d in self.disagreements.items() if d > IMPLEMENTATION_TOLERANCE]
        return found


def _verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def verify_worked_example(published_path: str | Path | None = None) -> VerificationResult:
    example = worked_example.load(published_path)
    trace = worked_example.trace(example)
    args = (example.X, example.W_Q, example.W_K, example.W_V, example.W_O)
    torch_out, torch_weights = crosscheck.torch_multihead_attention(*args)
    sdpa_out = crosscheck.sdpa_multihead_attention(*args)
    reference_weights = np.stack([h.A for h in trace.heads])  # (h, n, n)
    disagreements = {
        "torch.nn.MultiheadAttention": float(max(np.abs(torch_out - trace.output).max(),
                                                  np.abs(torch_weights - reference_weights).max())),
        "scaled_dot_product_attention": float(np.abs(sdpa_out - trace.output).max()),
    }
    return VerificationResult(example, trace, worked_example.compare_published(example, trace), disagreements)
