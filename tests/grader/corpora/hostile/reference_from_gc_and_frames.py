"""Hostile: looks for the course's functions anywhere in the child's memory, at each call: every object
the garbage collector knows (functions of those names from another file than this one, modules and dicts
holding them, the harness's "reference"), and every frame on the stack above the call (its locals and
globals). It implements nothing itself: expected 0."""
import gc
import sys
import types

NAMES = ("project", "scaled_scores", "causal_mask", "softmax", "attention_weights", "attention_head",
         "multi_head_attention")
OWN = __file__
_IN_MEMORY = {}


def _foreign(candidate, name):
    code = getattr(candidate, "__code__", None)
    return callable(candidate) and code is not None and code.co_filename != OWN and candidate.__name__ == name


def _from_namespace(namespace, name):
    if not isinstance(namespace, dict):
        return None
    direct = namespace.get(name)
    if _foreign(direct, name):
        return direct
    for key in ("reference", "_grader_reference"):
        holder = namespace.get(key)
        if holder is not None and _foreign(getattr(holder, name, None), name):
            return getattr(holder, name)
    return None


def _find(name):
    frame = sys._getframe(2)
    while frame is not None:
        for namespace in (frame.f_locals, frame.f_globals):
            found = _from_namespace(namespace, name)
            if found is not None:
                return found
        frame = frame.f_back
    if not _IN_MEMORY:  # one walk of everything the collector knows, kept for every later call
        _IN_MEMORY["walked"] = True
        for obj in gc.get_objects():
            for course_name in NAMES:
                found = obj if _foreign(obj, course_name) else _from_namespace(
                    vars(obj) if isinstance(obj, types.ModuleType) else obj, course_name)
                if found is not None:
                    _IN_MEMORY.setdefault(course_name, found)
    if name in _IN_MEMORY:
        return _IN_MEMORY[name]
    raise LookupError(f"no {name} but this file's")


def project(X, W):
    return _find("project")(X, W)


def scaled_scores(Q, K):
    return _find("scaled_scores")(Q, K)


def causal_mask(n):
    return _find("causal_mask")(n)


def softmax(S):
    return _find("softmax")(S)


def attention_weights(Q, K, causal=True):
    return _find("attention_weights")(Q, K, causal)


def attention_head(Q, K, V, causal=True):
    return _find("attention_head")(Q, K, V, causal)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return _find("multi_head_attention")(X, W_Q, W_K, W_V, W_O, causal)
