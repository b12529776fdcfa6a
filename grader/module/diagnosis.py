"""Question 2's diagnosis: the evidence the failing checks leave (``Evidence``), which of the module's mistakes
(``variants``) explain a wrong output (``explaining``), and the mistakes named from all of it (``diagnose``). Pure:
numbers in, mistake identifiers out."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from grader import tolerance
from grader.module import variants
from grader.module.contract import MODEL_FUNCTION, MODULE_CLASS, MODULE_TESTS


@dataclass
class Evidence:
    """What the failing checks showed, for ``diagnose``."""

    explained: list[frozenset[str]] = field(default_factory=list)  # per failing weighted case and mode
    leak: dict[str, int] = field(default_factory=dict)  # per mode, the first position (from 1) that saw later inputs
    eval_differs: bool = False
    # forward failed as nn.MultiheadAttention does on a (T, T) key_padding_mask, or its nn.MultiheadAttention is given
    # a key_padding_mask and no other mask
    key_padding: bool = False
    mask_not_cut: bool = False  # forward failed on every T below block_size as a (block_size, block_size) mask does
    model_leak: int | None = None  # the same for the whole model's logits


def explaining(x: np.ndarray, W, got: np.ndarray, want: np.ndarray, tol: np.ndarray) -> frozenset[str]:
    """Every variant whose output explains the student's on one case: the same wherever the variant gives a
    number, and different from the reference somewhere there (rows a variant leaves with nothing to attend
    to are NaN in it, and NaN or 0 in torch, depending on the kernel: they are no evidence either way)."""
    found = set()
    for mistake_id, variant in variants.VARIANTS:
        mine = variant.forward(x, W)
        defined = np.isfinite(mine)
        agree = tolerance.close(got, mine, tol)
        differs = ~tolerance.close(mine, want, tol) & defined
        if np.all(agree | ~defined) and np.any(agree & differs):
            found.add(mistake_id)
    return frozenset(found)


def diagnose(evidence: Evidence) -> dict[tuple[str, str], tuple[str, ...]]:
    """Mistakes to name, per (test name, group), from the evidence: a weighted mistake only when one variant
    alone explains every failing weighted case; a leak in one mode only is named by that cause; a leak in both
    (or only with gradients on) by the weighted mistake when that one leaks, else ``leaks-future``."""
    named: dict[tuple[str, str], tuple[str, ...]] = {}
    explained = frozenset.intersection(*evidence.explained) if evidence.explained else frozenset()
    weighted = tuple(sorted(explained)) if len(explained) == 1 else ()
    leak_modes = set(evidence.leak)
    by_mode = {frozenset({"eval"}): "mask-only-in-training", frozenset({"train"}): "mask-only-in-eval",
               frozenset({"train", "grad"}): "mask-only-in-eval"}
    mode_cause = by_mode.get(frozenset(leak_modes))
    if mode_cause:
        named[(MODULE_CLASS, "causal")] = (mode_cause,)
        if evidence.explained:  # the weighted cases failed in that mode only: the same cause
            named[(MODULE_CLASS, "worked")] = named[(MODULE_CLASS, "hidden")] = (mode_cause,)
    elif weighted:
        named[(MODULE_CLASS, "worked")] = named[(MODULE_CLASS, "hidden")] = weighted
    # a leak wherever it runs, or only when it is really trained (gradients on): what the weights showed is the more
    # precise name of the leak
    if leak_modes >= {"eval", "train"} or leak_modes == {"grad"}:
        named[(MODULE_CLASS, "causal")] = weighted if weighted and variants.leaks(weighted[0]) else ("leaks-future",)
    if evidence.eval_differs:
        named[(MODULE_CLASS, "eval")] = ("dropout-in-eval",)
        named.setdefault((MODULE_CLASS, "causal"), ("dropout-in-eval",))
    for found, cause in ((evidence.key_padding, "causal-mask-as-key-padding"), (evidence.mask_not_cut, "mask-not-cut")):
        if found:  # every check failed on the same call: its cause, wherever it failed
            for group in MODULE_TESTS[MODULE_CLASS]:
                named[(MODULE_CLASS, group)] = (cause,)
    if evidence.model_leak is not None:
        named[(MODEL_FUNCTION, "causal")] = ("leaks-future",)
    return named
