"""Question 2 judged in the grader's process: submissions that forge the driver in the sandbox, describe hostile
shapes, pass the weight-free checks without attending, or compute otherwise when really trained, graded through the
real sandbox (namespaces)."""

import resource
from dataclasses import replace

import pytest

from grader.grade import GradeConfig, grade
from grader.sandbox.limits import Limits

from .conftest import CORPORA

ATTACKS = CORPORA / "module_attacks"
CONFIG = GradeConfig(limits=Limits(call_timeout=10.0))


def _grade(stem, spawner):
    return grade(ATTACKS / f"{stem}.py", CONFIG, spawner=spawner)


def test_a_submission_that_forges_every_entry_point_of_the_driver_gets_nothing(spawner):
    result = _grade("forged_driver", spawner)
    assert result.score == 0 and {t.function for t in result.tests} == {"MultiHeadAttention", "build_model"}


def test_a_forged_huge_shape_is_refused_without_allocating_it(spawner):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    result = _grade("huge_description", spawner)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    weighted = [t for t in result.tests if t.group in ("worked", "hidden")]
    assert all(not t.passed and "(32768, 32768)" in t.feedback for t in weighted)
    assert all(t.passed for t in result.tests if t not in weighted)  # the module's own checks still count
    assert grown_mib < 256, grown_mib


def test_a_description_with_an_object_for_a_shape_is_a_reason_not_a_crash(spawner):
    result = _grade("object_for_shape", spawner)
    assert result.status == "graded" and result.score == 0
    assert all("private channel" in t.feedback for t in result.tests)


def test_a_module_that_sees_the_future_only_while_training_loses_causality_and_is_named(spawner):
    result = _grade("future_while_training", spawner)
    causal = next(t for t in result.tests if t.group == "causal")
    assert not causal.passed and "in train() mode" in causal.feedback
    assert result.mistakes == ["mask-only-in-eval"]


@pytest.mark.parametrize("stem", ["identity_forward", "bigram_padded"])
def test_outputs_that_do_not_depend_on_earlier_positions_earn_what_an_empty_answer_earns(stem, spawner):
    result = _grade(stem, spawner)
    assert result.score == 0, [t.feedback for t in result.tests if t.passed]


FREE_GROUPS = ("causal", "batch", "eval", "lengths", "dtypes")  # the checks that need no weights


@pytest.mark.parametrize("stem", ["running_mean", "fixed_causal_average", "mean_beside_a_per_position_map"])
def test_mixing_positions_with_weights_that_ignore_the_content_earns_no_weight_free_points(stem, spawner):
    result = _grade(stem, spawner)
    free = [t for t in result.tests if t.group in FREE_GROUPS]
    assert result.score == 0, [t.feedback for t in result.tests if t.passed]
    assert free and all("with fixed weights" in t.feedback for t in free), [t.feedback for t in free]


def test_a_module_that_leaks_only_when_really_trained_loses_causality_and_is_told_why(spawner):
    result = _grade("unmasked_when_trained", spawner)
    causal = next(t for t in result.tests if t.group == "causal")
    assert not causal.passed and "with gradients on, as in training" in causal.feedback
    assert result.mistakes == ["leaks-future"]
    told = [t for t in result.tests if "differ from its outputs under torch.no_grad()" in t.feedback]
    assert len(told) == 1, [t.feedback for t in result.tests]
    weighted = [t for t in result.tests if t.group in ("worked", "hidden")]
    assert all(not t.passed and "with gradients on" in t.feedback for t in weighted)


def test_a_module_that_computes_otherwise_with_gradients_is_told_so_in_portuguese(spawner):
    result = grade(ATTACKS / "unmasked_when_trained.py", replace(CONFIG, lang="pt"), spawner=spawner)
    causal = next(t for t in result.tests if t.group == "causal")
    assert "com gradientes ligados, como no treino" in causal.feedback
    assert any("diferem das saídas sob torch.no_grad()" in t.feedback for t in result.tests)
