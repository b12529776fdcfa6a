"""Question 2's diagnosis from evidence, in this process: which variant explains a wrong output, and which mistake
each test is told, per branch of ``diagnose``."""

import numpy as np
import pytest

from grader import tolerance
from grader.module import cases, variants
from grader.module.contract import MODEL_FUNCTION, MODULE_CLASS, MODULE_TESTS
from grader.module.diagnosis import Evidence, diagnose, explaining

MODULE = MODULE_CLASS


def judged(case: cases.WeightedCase, got: np.ndarray) -> frozenset[str]:
    want = variants.expected(case.x, case.weights)
    W = case.weights
    tol = np.array([tolerance.tolerance("multi_head_attention", (x, W.q, W.k, W.v, W.o), {"causal": True}, y)
                    for x, y in zip(case.x, want, strict=True)])[:, None, None]
    return explaining(case.x, W, got, want, tol)


def test_the_courses_answer_is_explained_by_no_mistake_and_each_mistakes_by_itself():
    case = cases.hidden_cases(0)[0]
    assert judged(case, variants.expected(case.x, case.weights)) == frozenset()
    for mistake, variant in variants.VARIANTS:
        assert mistake in judged(case, variant.forward(case.x, case.weights)), mistake


def test_rows_a_mistake_leaves_undefined_are_no_evidence_either_way():
    """A strict mask leaves the first row with nothing to attend to (NaN in the variant): torch gives NaN or 0 there,
    and the mistake is named either way."""
    case = cases.hidden_cases(0)[0]
    strict = dict((m, v) for m, v in variants.VARIANTS)["mask-hides-diagonal"].forward(case.x, case.weights)
    assert np.isnan(strict[:, 0]).all()
    assert "mask-hides-diagonal" in judged(case, np.nan_to_num(strict, nan=0.0))


def test_a_weighted_mistake_is_named_only_when_one_variant_alone_explains_every_failing_case():
    one = diagnose(Evidence(explained=[frozenset({"missing-scale", "wrong-scale"}), frozenset({"missing-scale"})]))
    assert one[(MODULE, "worked")] == one[(MODULE, "hidden")] == ("missing-scale",)
    assert diagnose(Evidence(explained=[frozenset({"missing-scale"}), frozenset({"wrong-scale"})])) == {}
    assert diagnose(Evidence(explained=[frozenset({"missing-scale", "wrong-scale"})])) == {}


@pytest.mark.parametrize("leak, cause", [({"eval": 1}, "mask-only-in-training"), ({"train": 2}, "mask-only-in-eval"),
                                         ({"train": 2, "grad": 2}, "mask-only-in-eval")])
def test_a_leak_in_one_mode_names_the_weighted_failures_by_the_same_cause(leak, cause):
    named = diagnose(Evidence(explained=[frozenset({"leaks-future"})], leak=leak))
    assert named == {(MODULE, g): (cause,) for g in ("causal", "worked", "hidden")}
    assert diagnose(Evidence(leak=leak)) == {(MODULE, "causal"): (cause,)}


def test_a_leak_everywhere_is_named_by_the_weighted_mistake_only_when_that_one_leaks():
    assert variants.leaks("mask-convention-inverted") and not variants.leaks("missing-scale")
    everywhere = {"eval": 1, "train": 1, "grad": 1}
    inverted = diagnose(Evidence(explained=[frozenset({"mask-convention-inverted"})], leak=everywhere))
    assert inverted[(MODULE, "causal")] == inverted[(MODULE, "hidden")] == ("mask-convention-inverted",)
    scale = diagnose(Evidence(explained=[frozenset({"missing-scale"})], leak=everywhere))
    assert scale[(MODULE, "causal")] == ("leaks-future",) and scale[(MODULE, "worked")] == ("missing-scale",)


def test_a_module_random_in_eval_mode_is_told_so_at_eval_and_at_causality_unless_a_leak_names_it():
    assert diagnose(Evidence(eval_differs=True)) == {(MODULE, "eval"): ("dropout-in-eval",),
                                                     (MODULE, "causal"): ("dropout-in-eval",)}
    named = diagnose(Evidence(eval_differs=True, leak={"eval": 1}))
    assert named[(MODULE, "causal")] == ("mask-only-in-training",) and named[(MODULE, "eval")] == ("dropout-in-eval",)


@pytest.mark.parametrize("evidence, cause", [(Evidence(key_padding=True), "causal-mask-as-key-padding"),
                                             (Evidence(mask_not_cut=True), "mask-not-cut")])
def test_a_call_every_check_failed_on_names_its_cause_at_every_group(evidence, cause):
    evidence.explained.append(frozenset({"missing-scale"}))
    evidence.leak["eval"] = 1
    assert diagnose(evidence) == {(MODULE, g): (cause,) for g in MODULE_TESTS[MODULE]}


def test_the_whole_models_leak_is_named_at_its_own_causality():
    assert diagnose(Evidence(model_leak=3)) == {(MODEL_FUNCTION, "causal"): ("leaks-future",)}
