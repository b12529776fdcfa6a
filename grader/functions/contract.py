"""Question 1's contract: the functions a submission defines, the tests they are graded on, the mistakes the
grader can name in them, and the public seed.

Names only, standard library only: the gradebook's columns, the rubric, the results, the class page, the intake
and the command line need a function's name or the public seed, not the cases (numpy and the reference), so they
import this and never ``grader.functions.cases``.
"""

from __future__ import annotations

# (the function a test is filed under, its groups in the order they run), the functions in the course's order:
# the worked example, hidden seeded cases, and large scores where a softmax runs (where exp can overflow).
# ``mha.reference.STUDENT_FUNCTIONS`` holds the same names and ``grader.functions.cases`` draws exactly these
# tests (tests pin both): the grader's parent names them without importing the reference.
TESTS = {
    "project": ("worked", "hidden"),
    "scaled_scores": ("worked", "hidden"),
    "causal_mask": ("worked", "hidden"),
    "softmax": ("worked", "hidden", "large"),
    "attention_weights": ("worked", "hidden", "large"),
    "attention_head": ("worked", "hidden", "large"),
    "multi_head_attention": ("worked", "hidden", "large"),
}
FUNCTIONS = tuple(TESTS)
GROUPS = ("worked", "hidden", "large")
DEFAULT_SEED = 20240917  # the public seed: the cases a student checks their own file on

# The mistakes the diagnosis names (``grader.functions.mistakes``), in the order the course meets the steps;
# grader/messages.toml words each one.
MISTAKE_IDS = (
    "softmax-wrong-axis",
    "softmax-overflow",
    "softmax-transposed",
    "loop-skips-last-row",
    "missing-scale",
    "wrong-scale",
    "scores-transposed",
    "elementwise-product",
    "scores-crossprod",
    "mask-not-applied",
    "mask-inverted",
    "mask-excludes-diagonal",
    "mask-not-additive",
    "mask-after-softmax",
    "concat-wrong-axis",
    "heads-concat-order",
    "missing-output-projection",
    "heads-share-weights",
)


def functions_with(group: str) -> tuple[str, ...]:
    """The functions that have tests in ``group``, in FUNCTIONS order."""
    return tuple(f for f, groups in TESTS.items() if group in groups)
