"""Grade one submission: run every case in the sandbox, judge it in the parent, diagnose, then word it.

Each question's judgement is its own package: question 1's (``grader.functions.run``: its checks, the diagnosis
``mistakes.diagnose``, attribution) and question 2's (``grader.module.run``) produce keys and values only; the
results are worded once, at the end, in ``config.lang``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from grader import rubric as rubric_mod
from grader import secret as secret_mod
from grader.functions.cases import all_cases
from grader.functions.contract import DEFAULT_SEED, FUNCTIONS
from grader.functions.run import grade_functions
from grader.grade_status import GradeStatus
from grader.intake import HandIn, Refusal, bounded
from grader.intake.explain import hint, own_paths, without_noise
from grader.messages import Message, notation_of
from grader.module import contract as module_contract
from grader.module import harness_sources
from grader.module.contract import Contract
from grader.module.run import grade_module
from grader.outcome_messages import describe, where
from grader.results import GradeResult, TestVerdict, word_tests
from grader.sandbox import launch, r_language
from grader.sandbox.early import EarlyLauncher
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status
from grader.sandbox.printable import quoted_output
from grader.sandbox.session import Sandbox

OUTPUT_SHOWN = 2000  # characters of the student's printed output repeated in the feedback
SKIPPED_SHOWN = 5  # skipped top-level statements named one by one; the rest are counted


@dataclass(frozen=True)
class GradeConfig:
    seed: int = DEFAULT_SEED
    lang: str = "en"
    limits: Limits = field(default_factory=Limits)
    rubric: rubric_mod.Rubric | None = None  # None: the default rubric
    isolation: str = "namespaces"  # a mode of grader.sandbox.isolation.MODES that runs here (the CLI resolves "auto")
    secret: bytes | None = None  # when set, each student's hidden cases come from it and their name, not ``seed``

    def seed_for(self, student: str) -> int:
        """The seed of ``student``'s hidden cases: from the secret and their identity, else the public one."""
        return self.seed if self.secret is None else secret_mod.case_seed(self.secret, student)


def grade(path: str | Path | HandIn | Refusal, config: GradeConfig = GradeConfig(), student: str | None = None,
          spawner=None, helpers: tuple[Path, ...] = (), identity: str | None = None,
          neighbours: bool = False, early: EarlyLauncher | None = None) -> GradeResult:
    """Grade one hand-in: a path (read by the intake's bounded helper process, with ``helpers`` as the helper
    modules it may import, and for a lone file graded on its own, ``neighbours``, the files beside it it
    imports that are no hand-in of their own), or what the intake already made of it; ``spawner`` is a batch's
    shared launcher (``grader.sandbox.launch``), else one is made. ``identity`` (the LMS's id, else ``student``)
    is what the hidden cases derive from. Any failure after reading is this student's 0 with the reason, never
    an exception (but a batch's launcher failing, which the batch retries). ``early``: a lone file's launcher the
    caller started already (``grader.sandbox.early``), else one is started here while the intake reads the file;
    it is closed here either way."""
    start = time.perf_counter()
    rubric = config.rubric or rubric_mod.load()
    given = student
    student = given or Path(path.name if isinstance(path, (HandIn, Refusal)) else path).stem
    try:
        if isinstance(path, (HandIn, Refusal)):
            handin = path
        else:
            if spawner is None and early is None:  # its sandbox starts while the intake reads it
                early = EarlyLauncher(config.isolation, [Path(path), *helpers], rubric.imports)
            handin = bounded.read(Path(path), helpers=helpers, seconds=config.limits.submission_seconds,
                                  neighbours=neighbours)
        student = given or Path(handin.name).stem  # the name as the intake shows it
        identity = identity or student
        if isinstance(handin, HandIn) and handin.language == "r" and r_language.missing():
            handin = Refusal(handin.name, r_language.missing())  # R is not installed here: say what to install
        if isinstance(handin, Refusal):
            return failed(student, config, rubric, handin.message, start, identity=identity)
        own = early.fitting(handin.source().encode()) if early is not None else None
        return _graded(handin, config, student, spawner or own, rubric, start, identity)
    except launch.LaunchError:
        if spawner is not None:
            raise
        error = "the sandbox did not start"
    except Exception as exc:  # noqa: BLE001 - sandbox start, judging, wording: the student still gets a result
        error = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        if early is not None:
            early.close()
    return failed(student, config, rubric, Message("grade.failed", {"error": error}), start, GradeStatus.GRADER_ERROR,
                  identity=identity)


def _graded(handin: HandIn, config: GradeConfig, student: str, spawner, rubric: rubric_mod.Rubric,
            start: float, identity: str) -> GradeResult:
    seed = config.seed_for(identity)
    # Reading the hand-in counted in its budget: the batch's bound (docs/instructors.md) holds with parsing.
    limits = replace(config.limits, submission_seconds=max(0.1, config.limits.submission_seconds - handin.seconds))
    imports = rubric.imports
    cases = all_cases(seed)

    notes: list[Message] = list(handin.notes)
    function_verdicts: list[TestVerdict] = []
    module_verdicts: list[TestVerdict] | None = None
    names = [*FUNCTIONS, *module_contract.MODULE_NAMES]
    with Sandbox(handin, names, limits, spawner=spawner, isolation=config.isolation, harness=harness_sources(),
                 imports=imports) as box:
        load = box.start()
        load_failure = None if load.status is Status.OK else _load_message(load, limits, handin, imports)
        if load_failure:
            notes.append(load_failure)
        notes += _skipped_messages(load.skipped, handin, imports)
        contract = _contract(rubric, load, box.source)
        if contract in (Contract.MODULE, Contract.BOTH):
            module_verdicts = grade_module(box, load, load_failure is not None, rubric.module_tests(), seed,
                                           limits)
        if contract == Contract.BOTH:
            notes.append(Message("load.both_contracts"))
        if contract != Contract.MODULE:
            function_verdicts = grade_functions(box, load, load_failure is not None, rubric.tests(), cases, limits,
                                                rubric.policy, imports, handin)
        verdicts = (module_verdicts or []) + function_verdicts
        verdicts = [replace(v, language=handin.language) for v in verdicts]  # mistakes worded in its language
        # A top-level statement past its budget does not count: it is skipped whatever the machine's load
        # (training at the top level), and a regrade alone would only cost the batch its time again.
        ran_out_of_time = box.timeouts > 0
        printed = without_noise(box.captured.text()) if box.captured.total else ""
        if handin.notebook:  # the sandbox's file named as the student knows it: their file, their cell
            printed = own_paths(printed, handin.name, lambda line: _place(handin, line).text(config.lang))
        else:
            printed = own_paths(printed, handin.name)
        if printed:
            shown = printed[:OUTPUT_SHOWN]
            notes.append(Message("load.output", {"total": box.captured.total, "kept": len(shown),
                                                 "output": quoted_output(shown)}))
    # Wording happens here, once, in the chosen language and the notation of the hand-in's.
    lang, notation = config.lang, notation_of(handin.language, handin.name)
    tests = [replace(t, visibility=rubric.visibility_of(t.group)) for t in word_tests(verdicts, lang)]
    status, reason = ((GradeStatus.IMPORT_FAILED, load_failure.text(lang, notation)) if load_failure
                      else (GradeStatus.GRADED, ""))
    return GradeResult(student, tests, lang, seed, time.perf_counter() - start,
                       [n.text(lang, notation) for n in notes], ran_out_of_time=ran_out_of_time,
                       public_seed=config.secret is None and seed == DEFAULT_SEED, status=status, reason=reason,
                       language=handin.language, file=handin.name)


def failed(student: str, config: GradeConfig, rubric: rubric_mod.Rubric | None, why: Message, start: float,
           status: GradeStatus = GradeStatus.REFUSED, identity: str | None = None) -> GradeResult:
    """Every test failed with the reason the hand-in was not read (``refused``) or not graded (``grader
    error``): a row and a results.json all the same (question 2's tests when the rubric grades every file on
    the module, question 1's otherwise); ``identity`` as in ``grade``."""
    lang = config.lang
    rubric = rubric or rubric_mod.load()
    tests = rubric.module_tests() if rubric.contract == Contract.MODULE else rubric.tests()
    refused = (None, Message("detail.refused"))
    reason = why.text(lang)
    seed = config.seed_for(identity or student)
    try:
        worded = [replace(TestVerdict(function, group, points, 1, 1, refused).word(lang),
                          visibility=rubric.visibility_of(group)) for function, group, points in tests]
    except Exception:  # noqa: BLE001 - wording itself failed: the reason alone, with no tests
        worded = []
    return GradeResult(student, worded, lang, seed,
                       time.perf_counter() - start, [reason], status=status, reason=reason,
                       public_seed=config.secret is None and seed == DEFAULT_SEED)


def _place(handin: HandIn, line: int | None) -> Message | str:
    """Where a line of the graded file is, as the student sees it (a notebook's cell, or the file's line)."""
    cell, at = handin.place(line)
    if at is None:
        return ""
    return Message("load.at_cell", {"cell": cell, "line": at}) if cell else Message("load.at_line", {"line": at})


def _skipped_messages(skipped: tuple[dict, ...], handin: HandIn, imports) -> list[Message]:
    """One note per top-level statement the load skipped (a few named, the rest counted)."""
    notes = []
    for item in skipped[:SKIPPED_SHOWN]:
        where_ = _place(handin, item["line"])
        if item["kind"] == "timeout":
            key = "load.skipped_timeout_r" if handin.language == "r" else "load.skipped_timeout"
            notes.append(Message(key, {"where": where_, "seconds": item["seconds"]}))
        else:
            why = hint(item["error_type"], item["error"], imports) or ""
            notes.append(Message("load.skipped", {"where": where_, "error": item["error"], "hint": why}))
    if len(skipped) > SKIPPED_SHOWN:
        notes.append(Message("load.skipped_more", {"count": len(skipped) - SKIPPED_SHOWN}))
    return notes


def _load_message(load: Outcome, limits: Limits, handin: HandIn, imports: tuple[str, ...]) -> Message:
    if load.status is not Status.ERROR:
        return describe(load, limits, loading=True, language=handin.language)
    if load.error_type == "R.parse":  # R's complaint at the student's own file and line, its context lines kept
        what, _, context = load.error.partition("\n")
        return Message("load.r_parse", {"file": PurePosixPath(handin.name).name, "where": _place(handin, load.line),
                                        "error": what, "context": "\n" + context if context else ""})
    cell, at = handin.place(load.line)
    place = Message("load.in_cell", {"cell": cell, "line": at}) if cell else where(load.line)
    return Message("load.error", {"error": own_paths(load.error, handin.name), "where": place,
                                  "hint": hint(load.error_type, load.error, imports) or ""})


def _contract(rubric: rubric_mod.Rubric, load: Outcome, source: bytes) -> Contract:
    """Question 2's tests when the rubric says so, or (auto) when the file defines MultiHeadAttention, whatever
    helpers it also defines (a ``softmax`` of its own); both questions' when it also defines all seven functions;
    a file that did not load is judged by whether its text defines the class."""
    if rubric.contract != Contract.AUTO:
        return rubric.contract
    if load.status is not Status.OK:
        return Contract.MODULE if b"class " + module_contract.MODULE_CLASS.encode() in source else Contract.FUNCTIONS
    if module_contract.MODULE_CLASS not in load.functions:
        return Contract.FUNCTIONS
    return Contract.BOTH if all(f in load.functions for f in FUNCTIONS) else Contract.MODULE
