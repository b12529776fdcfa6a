"""A class that exercises every section of the class page, handed in as a batch folder is.

Graded once by the real batch command (the sandbox, the intake, the gradebook, the run record); the
browser test and the page's tests read what it wrote. Who is who:

- alice (correct, numpy) and bruno (alice's file with every variable renamed, other comments): the
  near-copies, which must be the top pair;
- carla (correct, torch) and dora (correct, plain lists): written independently;
- eva and fabio: missing-scale, each in their own way (the most frequent mistake); gabi: softmax over
  the wrong axis; helena: softmax overflow (numpy warns, naming the file);
- nina: softmax computes but returns nothing (None); otto (written in a style of his own): project
  multiplies W @ X, which numpy refuses
  (the failures no named mistake explains);
- ivo: a symbolic link (refused); joana: a syntax error (import failed); kauã: an infinite loop in
  causal_mask (timed out); lia: the starter file untouched (0); marcos: Canvas marked him late.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from grader import template

SUBMISSIONS = Path(__file__).parents[1] / "corpora" / "submissions"
RENAMES = {"X": "entrada", "W": "pesos", "Q": "consultas", "K": "chaves", "V": "valores", "S": "escores",
           "e": "expo", "n": "tamanho", "heads": "cabecas", "wq": "pq", "wk": "pk", "wv": "pv",
           "W_Q": "PQ", "W_K": "PK", "W_V": "PV", "W_O": "PO"}


def renamed(source: str) -> str:
    """``source`` with each variable renamed and its comments and docstring rewritten: a disguised copy."""
    body = source.split('"""', 2)[2]
    for old, new in RENAMES.items():
        body = re.sub(rf"\b{old}\b", new, body)
    body = body.replace("import numpy as np", "import numpy as np  # arrays")
    return '"""Minha solução, feita sozinho."""\n' + body.replace("\n\n\ndef", "\n\n\n# próxima função\ndef")


# Written apart from the corpus (its own style), with project's product the wrong way round
OTTO = '''"""Otto's attention, with numpy's functions spelled out."""
import numpy


def project(X, W):
    return numpy.matmul(W, X)


def scaled_scores(Q, K):
    d = Q.shape[-1]
    return numpy.einsum("id,jd->ij", Q, K) / numpy.sqrt(d)


def causal_mask(n):
    m = numpy.zeros((n, n))
    m[numpy.triu_indices(n, 1)] = -numpy.inf
    return m


def softmax(S):
    shifted = S - numpy.max(S, axis=-1, keepdims=True)
    w = numpy.exp(shifted)
    return w / numpy.sum(w, axis=-1, keepdims=True)


def attention_weights(Q, K, causal=True):
    scores = scaled_scores(Q, K)
    return softmax(scores + causal_mask(len(scores)) if causal else scores)


def attention_head(Q, K, V, causal=True):
    return numpy.matmul(attention_weights(Q, K, causal), V)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, causal=True):
    outs = []
    for h in range(len(W_Q)):
        outs.append(attention_head(project(X, W_Q[h]), project(X, W_K[h]), project(X, W_V[h]), causal))
    return numpy.hstack(outs) @ W_O
'''


def missing_scale_torch() -> str:
    return (SUBMISSIONS / "correct_torch.py").read_text().replace(" / math.sqrt(Q.shape[1])", "")


def build(folder: Path) -> dict[str, str]:
    """Write the class into ``folder``; returns each student's expected reason for attention (if any)."""
    folder.mkdir(parents=True, exist_ok=True)
    read = lambda name: (SUBMISSIONS / name).read_text()  # noqa: E731
    files = {
        "alice.py": read("correct_numpy.py"),
        "bruno.py": renamed(read("correct_numpy.py")),
        "carla.py": read("correct_torch.py"),
        "dora.py": read("correct_lists.py"),
        "eva.py": read("mistake_missing_scale.py"),
        "fabio.py": missing_scale_torch(),
        "gabi.py": read("mistake_softmax_wrong_axis.py"),
        "helena.py": read("mistake_softmax_overflow.py"),
        "joana.py": read("adv_syntax_error.py"),
        "kaua.py": read("adv_infinite_loop.py"),
        "lia.py": template.render("pt"),
        "marcos_late_123_456_atencao.py": read("mistake_mask_inverted.py"),
        "nina.py": read("correct_numpy.py").replace("    return e / e.sum(axis=1, keepdims=True)",
                                                    "    e = e / e.sum(axis=1, keepdims=True)"),
        "otto.py": OTTO,
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    os.symlink(folder / "alice.py", folder / "ivo.py")
    return {"ivo": "refused", "joana": "import failed", "kaua": "timed out", "lia": "zero", "marcos": "late"}
