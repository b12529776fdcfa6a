"""Hostile: searches the files the child can see for the reference's source (a file that defines
multi_head_trace): every file outside /usr but the standard library and the big packages it is sent
(numpy, torch and what torch needs: none can hold it), and every Python file under /usr but its manuals,
headers and SDKs; for at most 20 s. Then runs the file it found and answers with it. It implements nothing
itself: expected 0."""
import os
import sys
import time

_ref = None
_skip = {"/proc", "/sys", "/dev", "/usr/share", "/usr/include", "/usr/lib/google-cloud-sdk", "/usr/lib/node_modules",
         *(f"{site}/{package}" for site in sys.path for package in ("torch", "sympy", "numpy", "networkx", "functorch",
                                                                    "torchgen", "mpmath", "jinja2"))}
_library = tuple(p for p in sys.path if p.endswith(("site-packages", "dist-packages")) or "/lib/python3" in p)
_deadline = time.monotonic() + 20
_read = 0
for _root, _dirs, _files in os.walk("/"):
    _dirs[:] = [d for d in _dirs if os.path.join(_root, d) not in _skip
                and not os.path.join(_root, d).startswith(_library) and not d.startswith("cuda")]
    for _name in _files:
        _path = os.path.join(_root, _name)
        if _path.startswith("/usr/") and not _name.endswith(".py"):
            continue
        try:
            if os.path.getsize(_path) < 1 << 20:
                _read += 1
                with open(_path, "rb") as _f:
                    if b"def multi_head_" + b"trace(" in _f.read():  # split: this file must not match itself
                        _ref = {"__name__": "found"}
                        exec(compile(open(_path).read(), _path, "exec"), _ref)
                        break
        except (OSError, SyntaxError, ValueError):
            continue
    if _ref is not None or time.monotonic() > _deadline:
        break
print("FOUND" if _ref is not None else f"NOT FOUND in {_read} files"
      + (" (out of time)" if time.monotonic() > _deadline else ", every file read"))


def project(X, W):
    return _ref["project"](X, W)


def scaled_scores(Q, K):
    return _ref["scaled_scores"](Q, K)


def causal_mask(n):
    return _ref["causal_mask"](n)


def softmax(S):
    return _ref["softmax"](S)


def attention_weights(Q, K, causal=True):
    return _ref["attention_weights"](Q, K, causal)


def attention_head(Q, K, V, causal=True):
    return _ref["attention_head"](Q, K, V, causal)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    return _ref["multi_head_attention"](X, W_Q, W_K, W_V, W_O, causal)
