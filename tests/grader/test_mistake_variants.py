"""Each way of making a mistake (a variant of ``mistakes.VARIANTS``) against a student file that makes it.

A variant must explain every failing case of its own file and not all those of any other; the diagnosis
of each file names its mistake and no other. Files are the corpus's (tests/grader/corpora/submissions/), one per
mistake, and tests/grader/corpora/variants/ for a mistake's other ways. They are judged in this process, by
``checks.check`` on the values the file's functions return (the sandbox is test_corpus.py's concern), so
that these tests take seconds and can run against every mutant in `make mutation`.
"""

import copy
import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from grader import tolerance
from grader.functions import mistakes
from grader.functions.cases import Case, all_cases
from grader.functions.checks import check
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status

from .conftest import CORPORA

# Judging is silent: a numpy warning (inf - inf, 0/0) would reach the grader's output.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

# mistakes.VARIANTS in its order: each variant, the student file that makes that mistake that way, and the
# functions of that file whose every failing case the variant explains (the others fail on cases where
# it gives NaN too, which is never evidence, or not at all).
WEIGHTS_ON = ("attention_weights", "attention_head", "multi_head_attention")
OWN_FILE = (
    ("softmax-wrong-axis", "submissions/mistake_softmax_wrong_axis.py", ("softmax", *WEIGHTS_ON)),  # per column
    ("softmax-wrong-axis", "variants/softmax_over_whole_matrix.py", ("softmax", *WEIGHTS_ON)),
    ("softmax-transposed", "submissions/mistake_softmax_transposed.py", ("softmax", *WEIGHTS_ON)),
    ("loop-skips-last-row", "submissions/mistake_loop_skips_last_row.py", ("softmax", *WEIGHTS_ON)),
    ("missing-scale", "submissions/mistake_missing_scale.py", ("scaled_scores", *WEIGHTS_ON)),
    ("wrong-scale", "submissions/mistake_wrong_scale.py", ("scaled_scores", *WEIGHTS_ON)),  # ÷ d_k
    ("wrong-scale", "variants/scale_by_sqrt_d_model.py", ("multi_head_attention",)),
    ("scores-transposed", "submissions/mistake_scores_transposed.py", ("scaled_scores", *WEIGHTS_ON)),
    ("elementwise-product", "submissions/mistake_elementwise_product.py", ("scaled_scores",)),
    ("scores-crossprod", "submissions/mistake_scores_crossprod.py", ("scaled_scores", "attention_weights")),
    ("mask-not-applied", "submissions/mistake_mask_not_applied.py", WEIGHTS_ON),
    ("mask-inverted", "submissions/mistake_mask_inverted.py", ("causal_mask", *WEIGHTS_ON)),
    ("mask-excludes-diagonal", "submissions/mistake_mask_excludes_diagonal.py",
     ("causal_mask", "multi_head_attention")),  # the first row has no key left: NaN in both
    ("mask-not-additive", "variants/mask_ones_where_masked_added.py", ("causal_mask", *WEIGHTS_ON)),
    ("mask-not-additive", "submissions/mistake_mask_not_additive.py", ("causal_mask", *WEIGHTS_ON)),  # 1 = allowed
    ("mask-not-additive", "variants/mask_ones_multiplied.py", ("causal_mask", *WEIGHTS_ON)),
    ("mask-after-softmax", "submissions/mistake_mask_after_softmax.py", WEIGHTS_ON),
    ("concat-wrong-axis", "submissions/mistake_concat_wrong_axis.py", ("multi_head_attention",)),
    ("heads-concat-order", "submissions/mistake_heads_concat_order.py", ("multi_head_attention",)),
    ("missing-output-projection", "submissions/mistake_missing_output_projection.py", ("multi_head_attention",)),
    ("heads-share-weights", "submissions/mistake_heads_share_weights.py", ("multi_head_attention",)),
)
OVERFLOW_FILE = "submissions/mistake_softmax_overflow.py"  # named from behaviour, not by a variant
MISTAKE_FILES = (*dict.fromkeys(f for _, f, _ in OWN_FILE), OVERFLOW_FILE)
CASES = all_cases()


@dataclass(frozen=True)
class Judged:
    case: Case
    outcome: Outcome
    passed: bool


def _functions(relative: str) -> dict:
    spec = importlib.util.spec_from_file_location(Path(relative).stem, CORPORA / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return vars(module)


def _outcome(student: dict, case: Case) -> Outcome:
    try:
        with np.errstate(all="ignore"):
            value = student[case.function](*copy.deepcopy(case.args), **case.kwargs)
        return Outcome(Status.OK, value=np.asarray(value, dtype=np.float64), dtype="float64")
    except Exception as exc:  # noqa: BLE001  (a student's error is a failed case, as the sandbox reports it)
        return Outcome(Status.ERROR, error=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__, stage="call")


@functools.cache
def _tol(index: int) -> float:
    case = CASES[index]
    return tolerance.tolerance(case.function, case.args, case.kwargs, case.reference_output())


@functools.cache
def failing(relative: str) -> tuple[tuple[int, Outcome], ...]:
    """(case index, outcome) of every case the file fails, by the numeric policy alone (as ``check`` does)."""
    student = _functions(relative)
    found = []
    for index, case in enumerate(CASES):
        outcome = _outcome(student, case)
        if outcome.status != "ok" or not tolerance.passes(outcome.value, case.reference_output(), _tol(index)):
            found.append((index, outcome))
    return tuple(found)


def explained(variant: mistakes.Variant, relative: str) -> set[str]:
    """The functions of a student file whose every failing case ``variant`` explains."""
    verdicts: dict[str, list[bool]] = {}
    for index, outcome in failing(relative):
        case = CASES[index]
        try:
            want = variant.run(case.function, case.args, case.kwargs)
        except (mistakes.NotApplicable, ValueError, IndexError):
            want = None
        ok = outcome.status == "ok" and want is not None and mistakes.explains(
            outcome.value, want, case.reference_output(), _tol(index))
        verdicts.setdefault(case.function, []).append(ok)
    return {function for function, oks in verdicts.items() if all(oks)}


def diagnosis(relative: str) -> dict[str, tuple[str, ...]]:
    """What ``check`` and ``diagnose`` name for the file, as grading it would."""
    verdicts = [check(CASES[index], outcome, Limits()) for index, outcome in failing(relative)]
    assert not any(v.passed for v in verdicts)
    return mistakes.diagnose([v.failure for v in verdicts])


def test_every_variant_has_a_student_file_of_its_own():
    assert [m for m, _, _ in OWN_FILE] == [m for m, _ in mistakes.VARIANTS]
    assert len({f for _, f, _ in OWN_FILE}) == len(OWN_FILE)


@pytest.mark.parametrize("index", range(len(OWN_FILE)), ids=[f.split("/")[1][:-3] for _, f, _ in OWN_FILE])
def test_a_variant_explains_its_own_file_and_no_other(index):
    """Of a file with another mistake it explains nothing; of a file with its own mistake made another way,
    at most the functions the two files share (the 0/1 mask added or multiplied: the same causal_mask)."""
    mistake, own, functions = OWN_FILE[index]
    variant = mistakes.VARIANTS[index][1]
    assert failing(own), f"{own} fails no case"
    assert explained(variant, own) == set(functions)
    for _, other, other_functions in [*OWN_FILE, (None, OVERFLOW_FILE, ())]:
        if other != own:
            also = explained(variant, other)
            same_mistake = other in {f for m, f, _ in OWN_FILE if m == mistake}
            assert (also < set(functions) and also < set(other_functions)) if same_mistake else not also, other


@pytest.mark.parametrize("relative", MISTAKE_FILES, ids=[f.split("/")[1][:-3] for f in MISTAKE_FILES])
def test_each_mistake_file_is_diagnosed_as_its_mistake_and_nothing_else(relative):
    mistake = {f: m for m, f, _ in OWN_FILE}.get(relative, "softmax-overflow")
    named = diagnosis(relative)
    assert {m for ids in named.values() for m in ids} == {mistake}
    assert all(ids in ((), (mistake,)) for ids in named.values()), named


@pytest.mark.parametrize("style", ["numpy", "lists"])  # torch's: test_corpus.py (its first call takes seconds)
def test_a_correct_file_passes_every_case(style):
    assert failing(f"submissions/correct_{style}.py") == ()
