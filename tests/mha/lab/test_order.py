"""Order sensitivity: zero for the one model that cannot see order (one layer, no positions), not for the others."""

import random

import pytest
import torch
import torch.nn.functional as F

from mha.data import CharVocab
from mha.lab.order import order_sensitivity
from mha.model import GPT
from mha.schema import GPTConfig
from mha.train import Corpus

CONTEXT = 32


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    rng = random.Random(0)
    text = "".join(rng.choice("abcdefgh \n") for _ in range(3000))
    vocab = CharVocab.from_text(text)
    ids = torch.from_numpy(vocab.encode(text))
    return Corpus(vocab=vocab, train=ids, val=ids, val_text=text, sha256="", val_fraction=0.5)


def model(corpus: Corpus, n_layer: int, positions: str) -> GPT:
    """A random model with weights large enough (std 0.3) for sharp attention, so that order, where it can
    reach the last position, moves the loss by about 1e-3 rather than GPT's initial 1e-5."""
    torch.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=corpus.vocab.size, block_size=CONTEXT, n_layer=n_layer, n_head=2, n_embd=32,
                        dropout=0.0, scale_scores=True, positions=positions))
    with torch.no_grad():
        for parameter in gpt.parameters():
            parameter.normal_(0.0, 0.3)
    return gpt


def test_one_layer_without_positions_cannot_see_order(corpus):
    """Its last position attends to a set of keys; the shuffle keeps the query (the last character) in place."""
    result = order_sensitivity(model(corpus, 1, "none"), corpus, windows=64, context=CONTEXT, seed=0)
    assert abs(result.gap) < 1e-6
    assert result.loss_in_order > 0.1  # a real loss, not a degenerate model


@pytest.mark.parametrize(("n_layer", "positions"), [(2, "none"), (1, "learned"), (1, "sinusoidal")])
def test_order_reaches_a_model_with_two_layers_or_with_positions(corpus, n_layer, positions):
    """Two layers: position j's first-layer output has seen only characters 0 … j, so order leaks through the mask."""
    result = order_sensitivity(model(corpus, n_layer, positions), corpus, windows=64, context=CONTEXT, seed=0)
    assert abs(result.gap) > 1e-3


def test_loss_in_order_is_the_models_own_loss_at_the_last_position_of_the_seeded_windows(corpus):
    gpt = model(corpus, 2, "learned")
    result = order_sensitivity(gpt, corpus, windows=3, context=CONTEXT, seed=5)
    starts = torch.randint(len(corpus.val) - CONTEXT, (3,), generator=torch.Generator().manual_seed(5))  # (3,)
    windows = torch.stack([corpus.val[s : s + CONTEXT] for s in starts.tolist()])  # (3, T)
    with torch.no_grad():
        logits, _ = gpt.eval()(windows)  # (3, T, vocab)
    expected = F.cross_entropy(logits[:, -1].double(), corpus.val[starts + CONTEXT]).item()
    assert result.loss_in_order == pytest.approx(expected, rel=1e-6)
    assert (result.windows, result.context, result.seed) == (3, CONTEXT, 5)


def test_the_same_seed_gives_the_same_numbers_and_another_seed_other_windows(corpus):
    gpt = model(corpus, 1, "learned")
    first, again = (order_sensitivity(gpt, corpus, 16, CONTEXT, seed=1) for _ in range(2))
    other = order_sensitivity(gpt, corpus, 16, CONTEXT, seed=2)
    assert first == again and other.loss_in_order != first.loss_in_order


def test_the_model_is_measured_in_eval_mode_and_left_in_the_mode_it_was_in(corpus):
    gpt = GPT(GPTConfig(vocab_size=corpus.vocab.size, block_size=CONTEXT, n_layer=1, n_head=2, n_embd=32,
                        dropout=0.5, scale_scores=True, positions="none"))
    gpt.train()
    result = order_sensitivity(gpt, corpus, 32, CONTEXT, seed=0)
    assert abs(result.gap) < 1e-6  # with dropout active, the two passes would drop different units
    assert gpt.training


@pytest.mark.parametrize(("windows", "context", "expected"), [
    (0, CONTEXT, "windows ≥ 1 and context ≥ 2, got 0 and 32"),
    (4, 1, "windows ≥ 1 and context ≥ 2, got 4 and 1"),
    (4, 3000, "the order windows have 3000 characters but the validation split only 3000"),
])
def test_impossible_windows_are_refused_naming_the_numbers(corpus, windows, context, expected):
    with pytest.raises(ValueError, match=expected):
        order_sensitivity(model(corpus, 1, "none"), corpus, windows, context, seed=0)
