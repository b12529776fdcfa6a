"""The starter file students fill in: ``python -m grader --template > student.py``."""

from __future__ import annotations

from grader.cases import FUNCTIONS
from grader.messages import text

SIGNATURES = {
    "project": "X, W",
    "scaled_scores": "Q, K",
    "causal_mask": "n",
    "softmax": "S",
    "attention_weights": "Q, K, causal=True",
    "attention_head": "Q, K, V, causal=True",
    "multi_head_attention": "X, W_Q, W_K, W_V, W_O, causal=True",
}


def _docstring(body: str, indent: str) -> str:
    lines = body.split("\n")
    inner = "\n".join((indent + line) if line else "" for line in lines[1:])
    return f'{indent}"""{lines[0]}' + (f"\n{inner}\n{indent}" if len(lines) > 1 else "") + '"""'


def render(lang: str) -> str:
    """The whole starter file, its docstrings in ``lang``; every body raises NotImplementedError."""
    parts = [_docstring(text(lang, "template.header"), ""), "", "import numpy as np  # noqa: F401", ""]
    for function in FUNCTIONS:
        parts += ["", f"def {function}({SIGNATURES[function]}):",
                  _docstring(text(lang, f"template.{function}"), "    "),
                  "    raise NotImplementedError", ""]
    return "\n".join(parts)
