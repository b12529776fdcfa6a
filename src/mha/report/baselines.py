"""Count-based baselines: what a model with no context (unigram) or one character of context (bigram)
achieves on the validation split, in nats per character, the unit of the training losses.

Both are fit on the training split only, cut where the training run cut it (its run record's
data.train_chars), over the full-corpus vocabulary (mha.data.CharVocab), with add-k smoothing so that a
character unseen in training costs a finite loss.
A model without attention sees only the current character, so the bigram loss is its floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha.data import CharVocab


@dataclass(frozen=True)
class Baselines:
    unigram: float  # validation cross-entropy, nats/char
    bigram: float
    add_k: float
    train_chars: int
    val_chars: int
    vocab_size: int


def unigram_loss(train_ids: np.ndarray, val_ids: np.ndarray, vocab_size: int, add_k: float) -> float:
    counts = np.bincount(train_ids, minlength=vocab_size).astype(np.float64) + add_k  # (V,)
    log_p = np.log(counts) - np.log(counts.sum())  # (V,)
    return float(-log_p[val_ids].mean())


def bigram_loss(train_ids: np.ndarray, val_ids: np.ndarray, vocab_size: int, add_k: float, previous: int) -> float:
    """-mean log p(c_t | c_{t-1}) over every validation character; the first one is conditioned on
    ``previous``, the last training character (the split cuts one continuous text)."""
    V = vocab_size
    counts = np.bincount(train_ids[:-1] * V + train_ids[1:], minlength=V * V).reshape(V, V).astype(np.float64)
    counts += add_k  # (V, V), row = previous character
    log_p = np.log(counts) - np.log(counts.sum(axis=1, keepdims=True))  # (V, V)
    context = np.concatenate([[previous], val_ids[:-1]])  # (N,)
    return float(-log_p[context, val_ids].mean())


def compute_baselines(corpus: str, train_chars: int, add_k: float) -> Baselines:
    """``train_chars``: the first train_chars characters train, the rest validate."""
    if not add_k > 0:
        raise ValueError(f"add_k must be positive (it keeps unseen characters at a finite loss), got {add_k!r}")
    vocab = CharVocab.from_text(corpus)
    train, val = corpus[:train_chars], corpus[train_chars:]
    if len(train) < 2 or not val:
        raise ValueError(f"the corpus ({len(corpus)} characters) is too short "
                         f"to split after {train_chars} training characters")
    train_ids, val_ids = vocab.encode(train), vocab.encode(val)
    return Baselines(
        unigram=unigram_loss(train_ids, val_ids, vocab.size, add_k),
        bigram=bigram_loss(train_ids, val_ids, vocab.size, add_k, previous=int(train_ids[-1])),
        add_k=add_k,
        train_chars=len(train),
        val_chars=len(val),
        vocab_size=vocab.size,
    )
