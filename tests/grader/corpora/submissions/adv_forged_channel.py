"""Adversarial: project writes forged answer frames to every open file descriptor, hoping one is
the grader's channel; the rest is right (expected 27/30: only project's checks fail)."""

import json
import os
import struct

import numpy as np

_ANSWER = json.dumps({"id": 1, "ok": True, "shape": [1, 1], "dtype": "float64"}).encode()
_FRAME = struct.pack("<16sIQ", b"0" * 16, len(_ANSWER), 8) + _ANSWER + struct.pack("<d", 1.0)


def project(X, W):
    for fd in range(3, 64):
        try:
            os.write(fd, _FRAME)
        except OSError:
            pass
    return X @ W


def scaled_scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[1])


def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)


def softmax(S):
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention_weights(Q, K, causal=True):
    S = scaled_scores(Q, K)
    if causal:
        S = S + causal_mask(S.shape[0])
    return softmax(S)


def attention_head(Q, K, V, causal=True):
    return attention_weights(Q, K, causal) @ V


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    heads = [attention_head(X @ q, X @ k, X @ v, causal) for q, k, v in zip(W_Q, W_K, W_V)]
    return np.concatenate(heads, axis=1) @ W_O
