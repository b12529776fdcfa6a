"""R students' diagnosis: each mistake named at the function that has it, and attribution as Python's.

The corpus is tests/grader/corpora/r_idioms/: the R idioms students write (1:n-1 loops, apply without t(), upper.tri and
lower.tri with the wrong diag, * for %*% and the reverse, crossprod and tcrossprod swapped, sweep and rowSums or
colSums confused, matrix(..., byrow = TRUE), column blocks off by one), one file each, every other function right;
beside each, its Python twin, written to compute what R computes (R's recycling, dropped dimensions, index 0),
and correct files that use the same idioms rightly. The first line of each R file says what it holds:
``# Mistake [ID] in FUNCTION: ...`` or ``# Error in FUNCTION: ...`` (R raises: no mistake can be named, only where).
The project's R corpus (tests/grader/corpora/r_corpus/) is compared with its twins (tests/grader/corpora/submissions/)
too.

Attribution is the same wire for both languages (grader/module/attribution.py): while one function is checked
again, the failing helpers it calls answer through the grader. ``test_a_helper_*`` pin down the R runner's
stand-ins one call at a time; the batch shows the verdicts that come of it.
"""

import copy
import re
from pathlib import Path

import numpy as np
import pytest

from grader import rubric
from grader.functions import mistakes
from grader.functions.attribution import ReferenceHelpers
from grader.functions.cases import all_cases
from grader.functions.checks import check
from grader.functions.contract import DEFAULT_SEED
from grader.sandbox import isolation, r_language
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status
from grader.sandbox.session import Sandbox
from mha import reference

from ..conftest import needs_system
from ..corpora.r_class import CORRECT, HEADER, R_CORPUS, TWINS

RUBRIC = rubric.load()
BECAUSE = re.compile(r"fails because your ([\w, ]+) does:")
# Where the project's R corpus has each mistake (its files say which mistake, not where).
CORPUS_AT = {"softmax-wrong-axis": "softmax", "softmax-transposed": "softmax", "loop-skips-last-row": "softmax",
             "elementwise-product": "scaled_scores", "scores-crossprod": "scaled_scores",
             "mask-excludes-diagonal": "causal_mask", "concat-wrong-axis": "multi_head_attention",
             "heads-concat-order": "multi_head_attention"}

needs_r = pytest.mark.skipif(r_language.find() is None,
                             reason=f"R is not installed: apt-get install {r_language.PACKAGES}")
needs_namespaces = needs_system(isolation.namespaces_problem(), "no namespaces here")


def expectation(path: Path) -> tuple[str | None, str]:
    """(the mistake, or None where R raises; the function that has it), from the file's first line (or, for the
    project's corpus, its name)."""
    if path.parent == R_CORPUS:
        mistake = path.stem.removeprefix("mistake_").replace("_", "-")
        return mistake, CORPUS_AT[mistake]
    found = HEADER.match(path.read_text(encoding="utf-8"))
    return found["mistake"], found["function"]


# ------------------------------------------------------------------------------------ the twins, in process
def _twin_diagnosis(path: Path) -> dict[str, tuple[str, ...]]:
    """What the diagnosis names per function for a Python twin, judged in this process (no sandbox)."""
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 - our own test fixture
    failures = []
    for case in all_cases(DEFAULT_SEED):
        try:
            with np.errstate(all="ignore"):
                value = namespace[case.function](*copy.deepcopy(case.args), **case.kwargs)
            outcome = Outcome(Status.OK, value=np.asarray(value, dtype=np.float64), dtype="float64")
        except Exception as exc:  # noqa: BLE001 - the twin's error is a failed case, as the sandbox reports it
            outcome = Outcome(Status.ERROR, error=str(exc), error_type=type(exc).__name__, stage="call")
        with np.errstate(all="ignore"):
            verdict = check(case, outcome, Limits())
        if not verdict.passed:
            failures.append(verdict.failure)
    return mistakes.diagnose([f for f in failures if f is not None])


@pytest.mark.parametrize("name", [n for n in TWINS if n.startswith("idiom_")])
def test_each_idioms_python_twin_is_named_at_the_function_that_has_it(name):
    """The R idioms' variants (mistakes.R_VARIANTS) on the twins: without them, R's shapes and recycling
    leave the function that has the mistake unnamed (1:n-1 on one row, apply on a 1 x 1 matrix)."""
    r_file, py_file = TWINS[name]
    mistake, function = expectation(r_file)
    named = _twin_diagnosis(py_file)
    assert named.get(function, ()) == ((mistake,) if mistake else ()), named


# --------------------------------------------------------------------------------- the runner's stand-ins
STUDENT = """softmax <- function(S) S * 0
attention_weights <- function(Q, K, causal = TRUE) {
  S <- tcrossprod(Q, K) / sqrt(ncol(Q))
  if (causal) S <- S + causal_mask(n = nrow(S))
  softmax(S)
}
"""


@pytest.fixture
def box(handin, tmp_path):
    source = tmp_path / "student.R"
    source.write_text(STUDENT)
    with Sandbox(handin(source), ["causal_mask", "softmax", "attention_weights"], imports=RUBRIC.imports) as sandbox:
        assert sandbox.start().status == "ok"
        yield sandbox


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@needs_r
@needs_namespaces
def test_a_helper_stands_in_for_one_call_and_the_students_own_comes_back(box):
    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    assert box.call("attention_weights", [Q, K], {"causal": True}).status == "error"  # no causal_mask of its own
    helped = box.call("attention_weights", [Q, K], {"causal": True},
                      helpers=ReferenceHelpers(("causal_mask", "softmax")))
    assert helped.status == "ok", helped.error
    np.testing.assert_allclose(helped.value, reference.attention_weights(Q, K), rtol=1e-12)
    # after the call: the absent one absent again, the student's own softmax back
    assert "causal_mask" in box.call("attention_weights", [Q, K], {"causal": True}).error
    assert not box.call("softmax", [Q]).value.any()


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@needs_r
@needs_namespaces
def test_a_helper_the_grader_refuses_is_an_error_in_the_students_call(box):
    Q = np.ones((3, 2))
    refused = box.call("attention_weights", [Q, Q], {"causal": False}, helpers=ReferenceHelpers(("softmax",), work=0))
    assert refused.status == "error" and "the grader computes softmax on inputs this small only" in refused.error
    assert box.call("softmax", [Q]).status == "ok"  # the child goes on


# ----------------------------------------------------------------------------------- graded as a batch
@pytest.fixture(scope="module")
def graded(graded_r_class):
    """Every R file of both corpora and every twin, graded as one batch (with sandbox/test_r_language.py's R
    class: tests/grader/corpora/r_class.py); per student, its results."""
    return graded_r_class.results


def verdicts(result: dict) -> dict[tuple[str, str], tuple]:
    """Each test's (passed, mistakes named, helpers its failure is attributed to)."""
    out = {}
    for test in result["tests"]:
        extra = test["extra_data"]
        because = BECAUSE.search(test["output"])
        out[(extra["function"], extra["group"])] = (test["status"] == "passed", tuple(extra["mistakes"]),
                                                    because[1] if because else None)
    return out


@needs_r
@needs_namespaces
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("name", list(TWINS))
def test_an_r_file_gets_its_python_twins_verdicts_test_by_test(graded, name):
    r_verdicts, py_verdicts = verdicts(graded[f"r_{name}"]), verdicts(graded[f"py_{name}"])
    assert r_verdicts == py_verdicts, {k: (v, py_verdicts.get(k)) for k, v in r_verdicts.items()
                                        if v != py_verdicts.get(k)}


@needs_r
@needs_namespaces
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("name", list(TWINS))
def test_each_r_mistake_is_named_at_its_function_and_elsewhere_attributed(graded, name):
    """The function that has the mistake fails and names it (or, where R raises, names nothing and blames no
    helper); every other failing test names no mistake and says which helper of the student's it fails by."""
    mistake, function = expectation(TWINS[name][0])
    own = {key: v for key, v in verdicts(graded[f"r_{name}"]).items() if not v[0]}
    assert any(f == function for f, _ in own), own
    for (f, group), (_, named, because) in own.items():
        if f == function:
            assert (named, because) == (((mistake,) if mistake else ()), None), (group, named, because)
        else:
            assert named == () and because, (f, group, named, because)


@needs_r
@needs_namespaces
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("name", CORRECT)
def test_the_same_idioms_written_right_get_full_marks(graded, name):
    result = graded[name]
    assert result["score"] == RUBRIC.total, [t["output"] for t in result["tests"] if t["status"] != "passed"]
