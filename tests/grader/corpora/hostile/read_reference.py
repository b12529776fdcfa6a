"""Hostile: loads the project's reference by path (from the repository path, sys.argv[0] and the
working directory) and answers with it. Expected 0: the reference is not in the sandbox's view."""
import importlib.util
import os
import sys

_ref = None
for base in (REPO, os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0] or "."))), os.getcwd()):
    path = os.path.join(base, "src", "mha", "reference.py")
    if os.path.exists(path):
        spec = importlib.util.spec_from_file_location("stolen_reference", path)
        _ref = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_ref)
        break


def project(X, W):
    return _ref.project(X, W)


def scaled_scores(Q, K):
    return _ref.scaled_scores(Q, K)


def causal_mask(n):
    return _ref.causal_mask(n)


def softmax(S):
    return _ref.softmax(S)


def attention_weights(Q, K, causal=True):
    return _ref.attention_weights(Q, K, causal)


def attention_head(Q, K, V, causal=True):
    return _ref.attention_head(Q, K, V, causal)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return _ref.multi_head_attention(X, W_Q, W_K, W_V, W_O, causal)
