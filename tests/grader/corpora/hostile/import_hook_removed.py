"""Hostile: removes the grader's import blocker from sys.meta_path, puts the repository on sys.path
and imports mha.reference. Expected 0: the packages are not in the sandbox at all."""
import sys

sys.meta_path[:] = [f for f in sys.meta_path if "Block" not in type(f).__name__]
sys.path[:0] = [REPO, REPO + "/src"]
try:
    from mha import reference as _ref
except ImportError:
    _ref = None


def project(X, W):
    return _ref.project(X, W)


def softmax(S):
    return _ref.softmax(S)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return _ref.multi_head_attention(X, W_Q, W_K, W_V, W_O, causal)
