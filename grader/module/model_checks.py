"""The whole model (question 2's optional part), judged by what it does: causal logits that use the context, the
course's sizes with attention layers that forward really calls, and the loss falling on real text.

The driver in the sandbox only builds the model, runs forward or a few training steps on the token ids sent
and answers raw numbers (logits, losses, parameter names and shapes); everything is judged here. None of the
checks counts for a model whose logits at a position do not depend on the tokens before it (a bigram table):
that is not a language model with attention. The training check trains on three sonnets (``text``) and
measures, here, the cross-entropy of the logits the model gives on held-out lines before and after.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

from grader.messages import Message
from grader.module import wire
from grader.module.checks import first_leak, moved
from grader.module.contract import COURSE_MODEL, MODEL_FUNCTION
from grader.module.runner import ModuleRunner, Unusable
from grader.module.text import SONNETS
from grader.module.verdict import CheckVerdict, failed, passed

CAUSAL_T = 12  # tokens per sequence in the causality check
STEPS, BATCH, WINDOW, LR_MILLI = 15, 4, 32, 3  # the training check: Adam at lr 3e-3
HELD_OUT, HELD_T = 48, 16  # held-out windows and their length; the loss is measured at each one's last position,
# whose target is never sent (short windows: the training call must fit one call's time on a loaded machine)
GAIN = 0.3  # nats the held-out loss must end below both the untrained model's and a uniform guess's
_TEXT_SEED = 23
_HELD_OUT_FRACTION = 0.25  # the end of the text, never trained on


@lru_cache(maxsize=1)
def _ids() -> np.ndarray:
    chars = sorted(set(SONNETS))
    return np.array([chars.index(c) for c in SONNETS])  # ids < 65


@lru_cache(maxsize=1)
def training_rows() -> tuple[np.ndarray, np.ndarray]:
    """(STEPS·BATCH, WINDOW + 1) training windows from the start of the text, and (HELD_OUT, HELD_T + 1) from
    its end; the same for every student."""
    ids = _ids()
    split = int(len(ids) * (1 - _HELD_OUT_FRACTION))
    rng = np.random.default_rng(_TEXT_SEED)
    starts = rng.integers(0, split - WINDOW - 1, STEPS * BATCH)
    held = np.linspace(split, len(ids) - HELD_T - 1, HELD_OUT).astype(int)
    return (np.stack([ids[s:s + WINDOW + 1] for s in starts]).astype(np.float64),
            np.stack([ids[s:s + HELD_T + 1] for s in held]).astype(np.float64))


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


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
    """Mean cross-entropy of (N, V) logits against (N,) ids, in float64, computed here."""
    top = logits.max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(logits - top).sum(axis=-1)) + top[:, 0]  # (N,)
    picked = logits[np.arange(len(targets)), targets.astype(int)]  # (N,)
    return float((log_z - picked).mean())


class ModelChecks:
    def __init__(self, runner: ModuleRunner):
        self.runner = runner
        self.spec = {"vocab_size": COURSE_MODEL.vocab_size, "block_size": COURSE_MODEL.block_size,
                     "seed": runner.torch_seed}
        self._runs: dict[str, np.ndarray] = {}
        self._trained: CheckVerdict | None = None

    def _call(self, function: str, args: list, spec: dict):  # an array, or a description (a JSON answer)
        try:
            return self.runner.call(function, args, spec)
        except Unusable as exc:
            call = f"{MODEL_FUNCTION}({COURSE_MODEL.vocab_size}, {COURSE_MODEL.block_size})"
            raise Unusable(Message("detail.model_failed", {"call": call, "problem": exc.message})) from None

    def _logits(self, inputs: list[np.ndarray], train: bool) -> np.ndarray:
        """(N, B, T, vocab) logits of (B, T) token ids, checked for shape and finiteness."""
        B, T = inputs[0].shape
        V = COURSE_MODEL.vocab_size
        out = self._call("_grader_model_forward", [i.astype(np.float64) for i in inputs],
                         {**self.spec, "train": int(train)})
        if out.ndim != 4 or out.shape != (len(inputs), B, T, V):
            got = tuple(out.shape[1:]) if out.ndim == 4 else tuple(out.shape)
            raise Unusable(Message("detail.module_shape", {"expected": str((B, T, V)), "got": str(got)}))
        return out

    def _perturbed(self, mode: str) -> np.ndarray:
        """Logits of a base sequence, of each with the tokens after position t changed, and of the base with only
        its first token changed; once per mode."""
        if mode not in self._runs:
            T, V = CAUSAL_T, COURSE_MODEL.vocab_size
            rng = np.random.default_rng([self.runner.seed, 23, 9])
            base = rng.integers(0, V, (1, T))
            other = (base + rng.integers(1, V, (1, T))) % V  # every token different
            inputs = [base] + [np.concatenate([base[:, : t + 1], other[:, t + 1:]], axis=1) for t in range(T - 1)]
            inputs.append(np.concatenate([other[:, :1], base[:, 1:]], axis=1))
            self._runs[mode] = self._logits(inputs, mode == "train")
        return self._runs[mode]

    def _context(self) -> Message | None:
        out = self._perturbed("eval")
        if moved(out[0, 0, 1:], out[CAUSAL_T, 0, 1:]):
            return None
        return Message("detail.model_no_context", {"length": CAUSAL_T})

    def run(self, group: str) -> CheckVerdict:
        """One check, counted only for a language model: its logits use the context, and it learns (the training
        check passes); otherwise every check fails with that reason."""
        try:
            gate = self._context()
            if gate is None and group != "training" and self.training().failed:
                gate = Message("detail.model_does_not_learn")
            if gate is not None:
                return failed(1, 1, gate)
            return {"causal": self.causal, "params": self.params, "training": self.training}[group]()
        except Unusable as exc:
            return failed(1, 1, exc.message)

    def causal(self) -> CheckVerdict:
        T = CAUSAL_T
        for mode in ("eval", "train"):
            out = self._perturbed(mode)
            leak = first_leak(out[0, 0], [o[0] for o in out[1:T]])
            if leak is not None:
                self.runner.evidence.model_leak = leak
                return failed(T - 1, 1, Message("detail.model_leaks_future", {"position": leak, "length": T,
                                                                            "mode": f"{mode}()"}))
        return passed(T - 1)

    def params(self) -> CheckVerdict:
        """The course's sizes: the trainable parameters a backward pass reaches count as one of the allowed
        totals, and forward calls one attention module per layer."""
        rng = np.random.default_rng([self.runner.seed, 23, 10])
        ids = rng.integers(0, COURSE_MODEL.vocab_size, (2, 16)).astype(np.float64)
        info = wire.model_description(self._call("_grader_model_describe", [ids], self.spec))
        if info is None:
            raise Unusable(Message("detail.protocol"))
        trainable = [p for p in info.params if p.trainable]
        unused = [p.name for p in trainable if not p.used]
        count = sum(p.entries for p in trainable if p.used)
        allowed = allowed_counts()
        if unused:
            return failed(1, 1, Message("detail.model_unused", {"count": len(unused), "names": ", ".join(unused[:5])}))
        if info.attention_called != COURSE_MODEL.n_layer:
            return failed(1, 1, Message("detail.model_attention_calls", {"called": info.attention_called,
                                                                        "layers": COURSE_MODEL.n_layer}))
        if count in allowed:
            return passed(1, [Message("note.model_count", {"count": count})])
        return failed(1, 1, Message("detail.model_count", {"count": count, "low": min(allowed), "high": max(allowed),
                                                          "d_model": COURSE_MODEL.n_embd,
                                                          "layers": COURSE_MODEL.n_layer}))

    def training(self) -> CheckVerdict:
        """Adam on the sonnets' first lines; the loss at the last position of held-out windows (a target the child
        never sees), measured here before and after, must fall below both the untrained model's and a uniform
        guess's by ``GAIN``."""
        if self._trained is None:
            self._trained = self._training()
        return self._trained

    def _training(self) -> CheckVerdict:
        train, held = training_rows()
        inputs, targets = held[:, :-1], held[:, -1]
        before = self._logits([inputs], train=False)[0, :, -1]  # (HELD_OUT, vocab)
        spec = {**self.spec, "B": BATCH, "lr_milli": LR_MILLI}
        out = self._call("_grader_model_train", [train, inputs], spec)
        size = HELD_OUT * HELD_T * COURSE_MODEL.vocab_size
        if out.ndim != 1 or out.size != STEPS + size or not np.all(np.isfinite(out)):
            return failed(1, 1, Message("detail.training_not_finite", {"steps": STEPS}))
        after = out[STEPS:].reshape(HELD_OUT, HELD_T, -1)[:, -1]  # (HELD_OUT, vocab)
        first, last = cross_entropy(before, targets), cross_entropy(after, targets)
        values = {"steps": STEPS, "first": first, "last": last}
        if last < min(first, math.log(COURSE_MODEL.vocab_size)) - GAIN:
            return passed(1, [Message("note.training", values)])
        return failed(1, 1, Message("detail.training_flat", {**values, "gain": GAIN}))


def run_model_check(checks: ModelChecks, group: str) -> CheckVerdict:
    return checks.run(group)
