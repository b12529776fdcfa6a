"""The "what happens without attention" paragraph follows the measured numbers."""

from dataclasses import replace

import pytest

from mha.artifacts.run import Curve, CurveRow, RunResults
from mha.report.baselines import Baselines
from mha.report.inputs import Run
from mha.report.messages import Messages
from mha.report.narrative import FLOOR_TOLERANCE, Comparison, compare, late_change, without_attention_paragraph

EN, PT = Messages("en"), Messages("pt")
# A run like the real one: attention well past the bigram floor, no attention sitting on it.
BASE = Comparison(attention_best=1.55, no_attention_best=2.47, unigram=3.29, bigram=2.46, gap=0.92,
                  late_change_attention=-0.12, late_change_no_attention=-0.004)


def paragraph(c: Comparison, t: Messages = EN) -> str:
    return " ".join(without_attention_paragraph(c, t))


def with_losses(attention: float, no_attention: float, **changes) -> Comparison:
    return replace(BASE, attention_best=attention, no_attention_best=no_attention, gap=no_attention - attention,
                   **changes)


def test_the_paragraph_states_each_models_distance_to_each_baseline():
    text = paragraph(BASE)
    assert "2.4700 nats/char: 0.0100 above the bigram baseline (2.4600) and 0.8200 below the unigram baseline" in text
    assert "1.5500 nats/char: 0.9100 below the bigram baseline and 1.7400 below the unigram baseline" in text
    assert "plateaus at the bigram floor" in text
    assert "costs 0.9200 nats/char" in text and "(59.4% more)" in text


def test_the_paragraph_changes_when_the_numbers_change():
    before = paragraph(BASE)
    after = paragraph(with_losses(1.60, 2.50))
    assert before != after
    assert "2.5000" in after and "2.4700" not in after


def test_a_model_without_attention_above_the_floor_is_called_undertrained():
    text = paragraph(with_losses(1.55, BASE.bigram + FLOOR_TOLERANCE + 0.2))
    assert "has not reached the bigram floor" in text and "plateaus" not in text


def test_a_model_without_attention_below_the_count_baseline_is_explained():
    text = paragraph(with_losses(1.55, BASE.bigram - FLOOR_TOLERANCE - 0.05))
    assert "a little below the smoothed count baseline" in text


def test_an_attention_model_that_has_not_passed_the_floor_is_said_so():
    text = paragraph(with_losses(BASE.bigram + 0.1, BASE.bigram + 0.3))
    assert "The attention model has not got past the bigram floor" in text
    assert "takes it past the bigram floor" not in text


def test_no_gap_is_reported_as_no_gain():
    text = paragraph(with_losses(2.47, 2.47))
    assert "attention did not lower the validation loss (gap +0.0000 nats/char)" in text


def test_a_curve_that_still_falls_as_fast_is_not_called_a_plateau():
    flat = paragraph(BASE)
    falling = paragraph(replace(BASE, late_change_no_attention=-0.2))
    assert "it has flattened out" in flat
    assert "flattened" not in falling and "−0.2000" in falling


def test_level_with_a_baseline_reads_naturally():
    text = paragraph(with_losses(1.55, BASE.bigram))
    assert "level with the bigram baseline" in text


def test_portuguese_paragraph_uses_the_same_numbers_with_decimal_commas():
    text = paragraph(BASE, PT)
    assert "2,4700 nats/caractere: 0,0100 acima da linha de base bigrama (2,4600)" in text
    assert "estaciona no piso do bigrama" in text
    assert "2.4700" not in text


def make_run(best: float, val: list[float]) -> Run:
    curve = Curve([CurveRow(step=100 * i, tokens=i, train_loss=v, val_loss=v, lr=0.001) for i, v in enumerate(val)])
    results = RunResults(best_val_loss=best, final_val_loss=val[-1], final_train_loss=val[-1],
                         iterations=curve.step[-1], tokens_seen=len(val), parameters=1)
    return Run(record=None, results=results, curve=curve, sample="x")


def test_compare_takes_best_losses_and_late_changes_from_the_runs():
    attention = make_run(1.5, [4.0, 3.0, 2.0, 1.8, 1.5])
    no_attention = make_run(2.4, [4.0, 2.6, 2.45, 2.42, 2.4])
    baselines = Baselines(unigram=3.3, bigram=2.45, add_k=0.1, train_chars=90, val_chars=10, vocab_size=5)
    c = compare(attention, no_attention, baselines)
    assert (c.attention_best, c.no_attention_best, c.gap) == (1.5, 2.4, pytest.approx(0.9))
    assert c.late_change_attention == pytest.approx(1.5 - 2.0)  # the middle evaluation is step 200 of 400
    assert c.late_change_no_attention == pytest.approx(2.4 - 2.45)


def test_late_change_of_a_single_evaluation_is_zero():
    assert late_change(make_run(2.0, [2.0]).curve) == 0.0
