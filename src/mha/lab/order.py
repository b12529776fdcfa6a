"""Does a trained model use the order of the characters it reads? Its loss with them in order and shuffled.

Self-attention treats its keys as a set: with one layer and no positional information, the output at the
last position is the same whatever the order of the characters before it. Two layers let order leak in
through the causal mask (position j's first-layer output has seen only characters 0 … j); positional
embeddings put it in directly. `order_sensitivity` measures what order is worth to a model, in nats/char.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mha.artifacts.lab import OrderSensitivity
from mha.model import GPT
from mha.train import Corpus

WINDOWS_PER_BATCH = 64  # windows through the model at once: bounds memory whatever `windows` is


def order_sensitivity(model: GPT, corpus: Corpus, windows: int, context: int, seed: int) -> OrderSensitivity:
    """The loss of the prediction after `windows` fixed windows of validation text, in order and shuffled.

    The windows (their starts) and one permutation of the first context − 1 characters of each come from
    a generator seeded with ``seed``; the last character stays in place, so the query is the same.
    """
    if windows < 1 or context < 2:
        raise ValueError(f"order sensitivity needs windows ≥ 1 and context ≥ 2, got {windows} and {context}")
    if context >= len(corpus.val):
        raise ValueError(f"the order windows have {context} characters but the validation split only "
                         f"{len(corpus.val)}")
    generator = torch.Generator().manual_seed(seed)
    starts = torch.randint(len(corpus.val) - context, (windows,), generator=generator)  # (W,)
    inputs = corpus.val[starts[:, None] + torch.arange(context)]  # (W, T)
    targets = corpus.val[starts + context]  # (W,): the character after each window
    permutations = torch.stack([torch.randperm(context - 1, generator=generator) for _ in range(windows)])  # (W, T-1)
    shuffled = torch.cat([inputs[:, :-1].gather(1, permutations), inputs[:, -1:]], dim=1)  # (W, T)
    return OrderSensitivity(
        windows=windows, context=context, seed=seed,
        loss_in_order=last_position_loss(model, inputs, targets),
        loss_shuffled=last_position_loss(model, shuffled, targets),
    )


@torch.no_grad()
def last_position_loss(model: GPT, inputs: torch.Tensor, targets: torch.Tensor) -> float:
    """Mean cross-entropy (nats) of the model's prediction at the last position of each row of inputs (W, T)."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    total = 0.0
    for rows, wanted in zip(inputs.split(WINDOWS_PER_BATCH), targets.split(WINDOWS_PER_BATCH), strict=True):
        logits, _ = model(rows.to(device))  # (w, T, vocab)
        total += F.cross_entropy(logits[:, -1].double(), wanted.to(device), reduction="sum").item()
    model.train(was_training)
    return total / len(inputs)
