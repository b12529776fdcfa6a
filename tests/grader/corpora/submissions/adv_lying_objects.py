"""Adversarial: returns objects that claim to equal anything, lie about their shape or blow up
when read (expected 0)."""

import numpy as np


class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__
    shape = (3, 3)
    dtype = "float64"


class EqualArray(np.ndarray):
    """A real array (of zeros) whose comparisons all say True."""

    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)

    def __array__(self, dtype=None, copy=None):
        return np.ones(self.shape)


class Explodes(AlwaysEqual):
    def __array__(self, *a, **k):
        raise RuntimeError("boom")

    def __len__(self):
        raise RuntimeError("boom")


class AlwaysEqualFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class FakeTensor(AlwaysEqual):
    def detach(self):
        return self

    def cpu(self):
        return self

    def __array__(self, *a, **k):
        return np.full((2, 2), np.nan)


def project(X, W):
    return np.zeros((X.shape[0], W.shape[1])).view(EqualArray)


def scaled_scores(Q, K):
    return AlwaysEqual()


def causal_mask(n):
    return Explodes()


def softmax(S):
    return [[AlwaysEqualFloat(0.0)] * S.shape[1] for _ in range(S.shape[0])]


def attention_weights(Q, K, causal=True):
    return FakeTensor()


def attention_head(Q, K, V, causal=True):
    return {"shape": (Q.shape[0], V.shape[1]), "equal": True}


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return "the right answer"
