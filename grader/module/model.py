"""The whole model (question 2's optional part): causal logits, the course's size, and a short training run.

The training check runs inside the sandbox on synthetic text derived deterministically here (the corpus
is not readable there, and shipping a slice of it would put the corpus in the bundle): words drawn
from a fixed list by a fixed seed, the same for every student. Characters repeat with word-level
structure, so a model that learns at all lowers its loss well within ``STEPS`` steps.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from grader.messages import Message
from grader.module.checks import Check, ModuleRunner, Unusable, _fail, _pass, first_leak
from grader.module.contract import COURSE_MODEL

CAUSAL_T = 12  # tokens per sequence in the causality check
STEPS, BATCH, WINDOW, LR_MILLI = 20, 4, 32, 3  # the training check: Adam at lr 3e-3
GAIN = 0.3  # nats the mean loss of the last five steps must be below the first three's
_WORDS = ("the", "king", "shall", "speak", "and", "my", "lord", "to", "thee", "of", "love", "death", "night", "be")
_TEXT_SEED = 23


@lru_cache(maxsize=1)
def training_ids() -> np.ndarray:
    """The synthetic text as token ids, one row: (1, n)."""
    rng = np.random.default_rng(_TEXT_SEED)
    text = " ".join(_WORDS[i] for i in rng.integers(0, len(_WORDS), 600)) + "."
    chars = sorted(set(text))
    return np.array([[chars.index(c) for c in text]], dtype=np.float64)  # (1, n): ids < 65


def allowed_counts(vocab: int = COURSE_MODEL.vocab_size, block_size: int = COURSE_MODEL.block_size,
                   d: int = COURSE_MODEL.n_embd, layers: int = COURSE_MODEL.n_layer) -> set[int]:
    """Every trainable-parameter count a d_model-d, ``layers``-layer model with a 4·d MLP may have. Allowed
    choices: attention biases on none, only the output, only Q/K/V, or all four projections; MLP biases or
    none; LayerNorm with or without bias; a final LayerNorm or none; learned positions (block_size·d) or
    fixed ones; an output layer of its own (with or without bias) or tied to the embedding. The number of
    heads does not change the count."""
    counts = set()
    for attn_b, mlp_b, ln_b, final_ln, learned, tied, head_b in itertools.product(
            (0, d, 3 * d, 4 * d), (0, 5 * d), (0, d), (0, 1), (0, 1), (0, 1), (0, vocab)):
        ln = d + ln_b
        per_layer = 4 * d * d + attn_b + 8 * d * d + mlp_b + 2 * ln
        total = vocab * d + learned * block_size * d + layers * per_layer + final_ln * ln
        counts.add(total + (0 if tied else vocab * d) + head_b)
    return counts


class ModelChecks:
    def __init__(self, runner: ModuleRunner):
        self.runner = runner
        self.spec = {"vocab_size": COURSE_MODEL.vocab_size, "block_size": COURSE_MODEL.block_size,
                     "seed": runner.torch_seed}

    def causal(self) -> Check:
        T, V = CAUSAL_T, COURSE_MODEL.vocab_size
        rng = np.random.default_rng([self.runner.seed, 23, 9])
        base = rng.integers(0, V, (1, T))
        other = (base + rng.integers(1, V, (1, T))) % V  # every token different
        inputs = [base] + [np.concatenate([base[:, : t + 1], other[:, t + 1:]], axis=1) for t in range(T - 1)]
        out = self.runner.call("_grader_model_forward", [i.astype(np.float64) for i in inputs], self.spec)
        if out.ndim != 4 or out.shape != (T, 1, T, V):
            got = tuple(out.shape[1:]) if out.ndim == 4 else tuple(out.shape)
            return _fail(T - 1, T - 1, Message("detail.module_shape", {"expected": str((1, T, V)), "got": str(got)}))
        leak = first_leak(out[0, 0], [o[0] for o in out[1:]])
        if leak is None:
            return _pass(T - 1)
        self.runner.evidence.model_leak = leak
        return _fail(T - 1, 1, Message("detail.model_leaks_future", {"position": leak, "length": T}))

    def params(self) -> Check:
        out = self.runner.call("_grader_model_count", [], self.spec)
        count = int(out.reshape(-1)[0]) if out.size == 1 else -1
        allowed = allowed_counts()
        if count in allowed:
            return _pass(1, [Message("note.model_count", {"count": count})])
        return _fail(1, 1, Message("detail.model_count", {"count": count, "low": min(allowed), "high": max(allowed),
                                                          "d_model": COURSE_MODEL.n_embd,
                                                          "layers": COURSE_MODEL.n_layer}))

    def training(self) -> Check:
        spec = {**self.spec, "B": BATCH, "T": WINDOW, "steps": STEPS, "lr_milli": LR_MILLI}
        losses = self.runner.call("_grader_model_train", [training_ids()], spec).reshape(-1)
        if losses.size != STEPS or not np.all(np.isfinite(losses)):
            return _fail(1, 1, Message("detail.training_not_finite", {"steps": STEPS}))
        first, last = float(losses[:3].mean()), float(losses[-5:].mean())
        values = {"steps": STEPS, "first": first, "last": last}
        if last < first - GAIN:
            return _pass(1, [Message("note.training", values)])
        return _fail(1, 1, Message("detail.training_flat", {**values, "gain": GAIN}))


def run_model_check(checks: ModelChecks, group: str) -> Check:
    try:
        return {"causal": checks.causal, "params": checks.params, "training": checks.training}[group]()
    except Unusable as exc:
        return _fail(1, 1, exc.message)
