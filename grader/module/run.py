"""Grade question 2 in a running sandbox: every module test of the rubric, then the diagnosis."""

from __future__ import annotations

from grader.messages import Message
from grader.module import cases
from grader.module.checks import ModuleChecks
from grader.module.contract import MODEL_FUNCTION, MODULE_CLASS
from grader.module.diagnosis import Evidence, diagnose
from grader.module.model_checks import ModelChecks, run_model_check
from grader.module.runner import ModuleRunner
from grader.module.verdict import CheckVerdict, failed
from grader.results import TestVerdict
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome
from grader.sandbox.session import Sandbox


def _module_check(checks: ModuleChecks, group: str) -> CheckVerdict:
    if group == "worked":
        return checks.weighted([cases.worked_case()])
    if group == "hidden":
        return checks.weighted(cases.hidden_cases(checks.runner.seed))
    return checks.free(group)


def through_module(check: CheckVerdict, evidence: Evidence) -> CheckVerdict:
    """The whole model's causality failure told as its module's, when the module leaks too (fix that first),
    instead of repeating it."""
    if not check.failed or not evidence.leak or evidence.model_leak is None:
        return check
    return failed(check.cases, check.failed, Message("detail.model_leaks_through_module", {
        "position": evidence.model_leak, "module_position": min(evidence.leak.values()), "module": MODULE_CLASS}))


def grade_module(box: Sandbox, load: Outcome, load_failed: bool, tests: list[tuple[str, str, float]], seed: int,
                 limits: Limits) -> list[TestVerdict]:
    """The verdicts of question 2's tests (``tests`` from the rubric), in order, mistakes named."""
    runner = ModuleRunner(box, limits, seed)
    module, model = ModuleChecks(runner), ModelChecks(runner)
    judged = []
    if not load_failed and MODEL_FUNCTION not in load.functions:  # the whole model is the contract's optional part
        tests = [t for t in tests if t[0] != MODEL_FUNCTION]
    for name, group, points in tests:
        if load_failed:
            check = failed(1, 1, Message("detail.load_failed"))
        elif name not in load.functions:
            check = failed(1, 1, Message("detail.missing", {"function": name}))
        elif name == MODULE_CLASS:
            check = _module_check(module, group)
        else:
            check = run_model_check(model, group)
        judged.append((name, group, points, check))
    if runner.notes and judged:  # said once, on the first test (the module judged in float32)
        name, group, points, check = judged[0]
        judged[0] = (name, group, points, CheckVerdict(check.cases, check.failed, check.first_failure,
                                                       check.notes + tuple(runner.notes)))
    judged = [(name, group, points, through_module(check, runner.evidence)
               if (name, group) == (MODEL_FUNCTION, "causal") else check) for name, group, points, check in judged]
    named = diagnose(runner.evidence)
    return [TestVerdict(name, group, points, c.cases, c.failed, c.first_failure, c.notes,
                        named.get((name, group), ()) if c.failed else ())
            for name, group, points, c in judged]
