"""The answer to "what happens in training without attention?", written from the measured numbers.

Each sentence is chosen by comparing losses, then filled in with them; no sentence is fixed prose
about a particular run. The comparisons:
  - where each model's best validation loss lies relative to the bigram and unigram baselines;
  - whether the model without attention sits at the bigram floor (within FLOOR_TOLERANCE), above it
    (training too short) or below it (the smoothed counts are a weaker bigram model);
  - how much each validation curve still moved over the second half of training (a plateau test);
  - the gap between the two models.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha.artifacts.run import Curve
from mha.report.baselines import Baselines
from mha.report.inputs import Run
from mha.report.messages import Messages

# Closer than this (nats/char) to a baseline counts as "at" it: well above the run-to-run noise of a
# validation estimate over a few hundred thousand characters, well below the gaps this report is about.
FLOOR_TOLERANCE = 0.05
LEVEL_TOLERANCE = 0.0005  # closer than this prints as "level with" instead of "0.0000 below"


@dataclass(frozen=True)
class Comparison:
    """The numbers the paragraph is built from, kept for tests and for the page."""

    attention_best: float
    no_attention_best: float
    unigram: float
    bigram: float
    gap: float  # no_attention_best - attention_best
    late_change_attention: float  # val loss at the end minus at mid-training (negative = still improving)
    late_change_no_attention: float


def late_change(curve: Curve) -> float:
    """Validation loss at the last evaluation minus at the evaluation closest to mid-training."""
    middle_step = curve.step[-1] / 2
    middle = min(range(len(curve.step)), key=lambda i: (abs(curve.step[i] - middle_step), i))
    return curve.val_loss[-1] - curve.val_loss[middle]


def compare(attention: Run, no_attention: Run, baselines: Baselines) -> Comparison:
    a, n = attention.results.best_val_loss, no_attention.results.best_val_loss
    return Comparison(
        attention_best=a,
        no_attention_best=n,
        unigram=baselines.unigram,
        bigram=baselines.bigram,
        gap=n - a,
        late_change_attention=late_change(attention.curve),
        late_change_no_attention=late_change(no_attention.curve),
    )


def relation(t: Messages, loss: float, baseline: float) -> str:
    """'0.1234 below' / '0.1234 above' / 'level with' (the baseline)."""
    diff = loss - baseline
    if abs(diff) < LEVEL_TOLERANCE:
        return t("rel_level")
    return t("rel_below" if diff < 0 else "rel_above", diff=t.number(abs(diff)))


def without_attention_paragraph(c: Comparison, t: Messages) -> list[str]:
    """The sentences of the paragraph, in order."""
    sentences = [t("q3_intro")]
    sentences.append(
        t(
            "q3_no_attention_numbers",
            loss=t.number(c.no_attention_best),
            rel_bigram=relation(t, c.no_attention_best, c.bigram),
            bigram=t.number(c.bigram),
            rel_unigram=relation(t, c.no_attention_best, c.unigram),
            unigram=t.number(c.unigram),
        )
    )
    above_floor = c.no_attention_best - c.bigram
    if abs(above_floor) <= FLOOR_TOLERANCE:
        sentences.append(t("q3_no_attention_floor"))
    elif above_floor > 0:
        sentences.append(t("q3_no_attention_short"))
    else:
        sentences.append(t("q3_no_attention_below"))
    # Flatter means: it improved less over the second half than the attention model did.
    flattened = c.late_change_no_attention > c.late_change_attention
    sentences.append(
        t(
            "q3_late_flat" if flattened else "q3_late_both",
            change=t.number(c.late_change_no_attention, signed=True),
            change_attention=t.number(c.late_change_attention, signed=True),
        )
    )
    sentences.append(
        t(
            "q3_attention_numbers",
            loss=t.number(c.attention_best),
            rel_bigram=relation(t, c.attention_best, c.bigram),
            rel_unigram=relation(t, c.attention_best, c.unigram),
        )
    )
    past_floor = c.bigram - c.attention_best > FLOOR_TOLERANCE
    sentences.append(t("q3_attention_context" if past_floor else "q3_attention_short"))
    if c.gap > 0:  # losses are cross-entropies of real text, so attention_best > 0
        sentences.append(
            t("q3_gap_positive", gap=t.number(c.gap), percent=t.percent(c.gap / c.attention_best, 1))
        )
    else:
        sentences.append(t("q3_gap_none", gap=t.number(c.gap, signed=True)))
    return sentences
