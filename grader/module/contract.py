"""Question 2's contract: what a module submission defines, and the tests it is graded on.

- ``class MultiHeadAttention(nn.Module)``, built as ``MultiHeadAttention(d_model, n_heads)`` (it may
  also take ``dropout`` and ``block_size``, which the grader then passes), whose ``forward(x)`` maps
  (B, T, d_model) to (B, T, d_model) with a causal mask;
- optionally ``build_model(vocab_size, block_size)``, returning an ``nn.Module`` that maps (B, T) token
  ids to (B, T, vocab_size) logits (or a tuple whose first item they are, as nanoGPT returns), with the
  course's sizes: d_model 128, 2 layers, 2 heads.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

MODULE_CLASS = "MultiHeadAttention"
MODEL_FUNCTION = "build_model"
# (the name a test is filed under, its groups in the order they run)
MODULE_TESTS = {
    MODULE_CLASS: ("worked", "hidden", "causal", "batch", "eval", "lengths", "dtypes"),
    MODEL_FUNCTION: ("causal", "params", "training"),
}
MODULE_NAMES = tuple(MODULE_TESTS)
# The mistakes only a module makes, in the order of its steps (the seven functions' own are
# grader.functions.contract's).
MODULE_MISTAKE_IDS = ("heads-mixed-by-view", "softmax-wrong-dim", "mask-hides-diagonal", "mask-not-cut", "leaks-future",
                      "mask-convention-inverted", "mask-only-in-training", "mask-only-in-eval",
                      "causal-mask-as-key-padding", "heads-concat-order", "dropout-in-eval")


class Contract(StrEnum):
    """Which question's tests a hand-in is graded on: a rubric's ``contract`` option, or what ``auto`` tells."""

    AUTO = "auto"  # the rubric's default: told from the hand-in, by what it defines (grader.grade)
    FUNCTIONS = "functions"  # question 1's seven functions
    MODULE = "module"  # question 2's module (and, optionally, the whole model)
    BOTH = "both"  # told alone: the hand-in defines the module and all seven functions, graded on both questions


# What a rubric may say, as plain values (its refusal lists them with repr).
CONTRACTS = (Contract.AUTO.value, Contract.FUNCTIONS.value, Contract.MODULE.value)


@dataclass(frozen=True)
class CourseModel:
    """The course's sizes, as ``mha.model.GPTConfig``'s defaults hold them (a test pins them equal): the grader's
    parent never imports torch, so it cannot read them from there."""

    vocab_size: int = 65
    block_size: int = 128
    n_embd: int = 128
    n_layer: int = 2
    n_head: int = 2


COURSE_MODEL = CourseModel()
