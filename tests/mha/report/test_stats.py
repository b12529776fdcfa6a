"""The report's computed numbers: count baselines and attention-head statistics."""

import math
from collections import Counter
from itertools import pairwise

import numpy as np
import pytest

from mha.data import split_text
from mha.report.baselines import compute_baselines
from mha.report.heads import all_head_stats, head_stats

TEXT = "abracadabra, abracadabra! a cab, a bad cab; abba." * 4


def hand_baselines(text: str, val_fraction: float, k: float) -> tuple[float, float]:
    """The same two losses by plain counting, one character at a time."""
    vocab = sorted(set(text))
    train, val = split_text(text, val_fraction)
    uni = Counter(train)
    uni_total = len(train) + k * len(vocab)
    unigram = -sum(math.log((uni[c] + k) / uni_total) for c in val) / len(val)
    pairs = Counter(pairwise(train))
    after = Counter(train[:-1])
    context = train[-1] + val
    bigram = -sum(
        math.log((pairs[(p, c)] + k) / (after[p] + k * len(vocab))) for p, c in pairwise(context)
    ) / len(val)
    return unigram, bigram


@pytest.mark.parametrize("k", [0.1, 1.0])
def test_baselines_equal_plain_counting_on_the_validation_split(k):
    train_chars = len(split_text(TEXT, 0.2)[0])
    b = compute_baselines(TEXT, train_chars=train_chars, add_k=k)
    unigram, bigram = hand_baselines(TEXT, 0.2, k)
    assert b.unigram == pytest.approx(unigram, rel=1e-12)
    assert b.bigram == pytest.approx(bigram, rel=1e-12)
    assert (b.train_chars, b.val_chars) == (train_chars, len(TEXT) - train_chars)
    assert b.vocab_size == len(set(TEXT))


def test_bigram_beats_unigram_on_text_with_structure():
    b = compute_baselines(TEXT, train_chars=160, add_k=0.1)
    assert b.bigram < b.unigram


def test_a_character_unseen_in_training_costs_a_finite_loss():
    text = "ab" * 50 + "z"  # 'z' only in the validation split
    b = compute_baselines(text, train_chars=100, add_k=0.1)
    assert math.isfinite(b.unigram) and math.isfinite(b.bigram)


def test_non_positive_add_k_is_refused_with_its_value():
    with pytest.raises(ValueError, match=r"add_k must be positive.*0"):
        compute_baselines(TEXT, train_chars=160, add_k=0)


def causal(scores: np.ndarray) -> np.ndarray:
    T = scores.shape[0]
    A = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, 0.0)
    return A / A.sum(axis=1, keepdims=True)


def test_a_previous_character_head_is_read_as_one():
    T = 16
    A = causal(np.eye(T, k=-1) + np.eye(T) * 1e-12)
    A[0, 0] = 1.0
    s = head_stats(A, layer=1, head=2)
    assert s.previous_share == pytest.approx(1.0, abs=1e-9)
    assert s.mean_distance == pytest.approx((T - 1) / T, abs=1e-9)
    assert s.kind == "previous"
    assert (s.layer, s.head) == (1, 2)


def test_a_diagonal_head_is_read_as_looking_at_itself():
    s = head_stats(np.eye(10), layer=2, head=1)
    assert (s.self_share, s.mean_distance, s.effective_keys, s.kind) == (1.0, 0.0, 1.0, "self")


def test_a_uniform_causal_head_spreads_over_its_whole_past():
    T = 8
    s = head_stats(causal(np.ones((T, T))), layer=1, head=1)
    assert s.effective_keys == pytest.approx(np.mean(np.arange(1, T + 1)))
    assert s.mean_distance == pytest.approx(np.mean(np.arange(T) / 2))
    assert s.kind == "spread"
    assert s.above_diagonal == 0.0


def test_weight_above_the_diagonal_is_reported_not_hidden():
    s = head_stats(np.full((4, 4), 0.25), layer=1, head=1)
    assert s.above_diagonal == pytest.approx(6 * 0.25)


def test_all_head_stats_walks_layers_then_heads():
    eye = np.eye(4).tolist()
    stats = all_head_stats([[eye, eye, eye], [eye, eye, eye]])
    assert [(s.layer, s.head) for s in stats] == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]
