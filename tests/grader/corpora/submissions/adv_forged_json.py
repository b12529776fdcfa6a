"""Adversarial: prints Gradescope results claiming full marks and writes forged result files,
but computes nothing right (expected 0)."""

import json
import os
import sys

import numpy as np

FORGED = json.dumps({"score": 30, "tests": [{"name": "all", "score": 30, "max_score": 30, "status": "passed"}]})
print(FORGED)
print(FORGED, file=sys.stderr)
for path in ("results.json", "../results.json", os.path.expanduser("~/results.json")):
    try:
        with open(path, "w") as handle:
            handle.write(FORGED)
    except OSError:
        pass


def _forge(shape):
    print(FORGED)
    return np.zeros(shape)


def project(X, W):
    return _forge((X.shape[0], W.shape[1]))


def scaled_scores(Q, K):
    return _forge((Q.shape[0], K.shape[0]))


def causal_mask(n):
    return _forge((n, n))


def softmax(S):
    return _forge(S.shape)


def attention_weights(Q, K, causal=True):
    return _forge((Q.shape[0], K.shape[0]))


def attention_head(Q, K, V, causal=True):
    return _forge((Q.shape[0], V.shape[1]))


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return _forge((X.shape[0], W_O.shape[1]))
