"""Adversarial: monkeypatches numpy, math, json and builtins so that every comparison or
conversion would say "equal" or "correct"; only project is really right (expected 3/30)."""

import builtins
import json
import math

import numpy as np

_real_asarray = np.asarray
np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *x, **k: np.ones(np.shape(a), dtype=bool)
np.array_equal = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
math.isclose = lambda *a, **k: True
json.dumps = lambda *a, **k: '{"id": 1, "ok": true, "score": 30}'
json.loads = lambda *a, **k: {"ok": True, "score": 30}
np.asarray = lambda value, *a, **k: _real_asarray(value, *a, **k) * 0  # every conversion gives zeros
builtins.isinstance = lambda *a: True


def project(X, W):
    return X @ W


def _zeros_like_answer(n, m):
    return np.zeros((n, m))


def scaled_scores(Q, K):
    return _zeros_like_answer(Q.shape[0], K.shape[0])


def causal_mask(n):
    return _zeros_like_answer(n, n)


def softmax(S):
    return _zeros_like_answer(*S.shape)


def attention_weights(Q, K, causal=True):
    return _zeros_like_answer(Q.shape[0], K.shape[0])


def attention_head(Q, K, V, causal=True):
    return _zeros_like_answer(Q.shape[0], V.shape[1])


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return _zeros_like_answer(X.shape[0], W_O.shape[1])
