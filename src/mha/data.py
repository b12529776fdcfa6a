"""The character-level corpus: vocabulary, encoding and the train/validation split."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CharVocab:
    """Every distinct character of the corpus, sorted; a character's id is its index."""

    chars: str

    @classmethod
    def from_text(cls, text: str) -> CharVocab:
        if not text:
            raise ValueError("cannot build a vocabulary from an empty corpus")
        return cls("".join(sorted(set(text))))

    @property
    def size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        index = {c: i for i, c in enumerate(self.chars)}
        unknown = sorted(set(text) - index.keys())
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {''.join(unknown)!r}")
        return np.fromiter((index[c] for c in text), dtype=np.int64, count=len(text))

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


def split_text(text: str, val_fraction: float) -> tuple[str, str]:
    """The first (1 - val_fraction) of the corpus trains, the rest validates (no shuffling: the
    validation text is a contiguous, unseen stretch of the plays)."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be between 0 and 1 (exclusive), got {val_fraction!r}")
    cut = int(len(text) * (1.0 - val_fraction))
    return text[:cut], text[cut:]
