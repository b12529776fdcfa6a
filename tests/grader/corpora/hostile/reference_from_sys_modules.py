"""Hostile: answers with whatever module in sys.modules has the course's functions: first the name the
reference once ran under in the child ("_grader_reference"), then any module (other than this one) that
defines causal_mask, scaled_scores and attention_head. It implements nothing itself: expected 0."""
import sys


def _stolen():
    found = sys.modules.get("_grader_reference")
    if found is not None:
        return found
    for name, module in list(sys.modules.items()):
        if name != __name__ and all(hasattr(module, f) for f in ("causal_mask", "scaled_scores", "attention_head")):
            return module
    return None


def project(X, W):
    return _stolen().project(X, W)


def scaled_scores(Q, K):
    return _stolen().scaled_scores(Q, K)


def causal_mask(n):
    return _stolen().causal_mask(n)


def softmax(S):
    return _stolen().softmax(S)


def attention_weights(Q, K, causal=True):
    return _stolen().attention_weights(Q, K, causal)


def attention_head(Q, K, V, causal=True):
    return _stolen().attention_head(Q, K, V, causal)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return _stolen().multi_head_attention(X, W_Q, W_K, W_V, W_O, causal)
