"""One file under many identities: the totals the grader gives it, each identity's cases its own.

The corpora's files are the project's own (no hostile ones). A Python file is loaded afresh for every identity
(a grading is a fresh process: a file that keeps state between calls starts clean) and called on every case of
that identity's cases in the grader's order, then judged as ``grader.functions.checks`` judges a case (the same
tolerance, the same finite-mask rule, the same all-or-nothing test), without the sandbox. An R file is graded by
the grader itself (``grader.grade.grade``, trusted isolation: these are our files), one grading per identity. Only
the cases vary between identities, so what this measures is the cases' part in a grade.
``benchmarks/same_grade.py`` runs it on 50 identities.
"""

from __future__ import annotations

import copy
import importlib.util
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from grader import rubric as rubric_mod
from grader import secret
from grader.functions.cases import all_cases
from grader.functions.checks import check
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status
from grader.tolerance import passes, tolerance

HERE = Path(__file__).parent
# Every corpus of question-1 files the tests hold, and the mistakes no catalogue holds
# (tests/grader/corpora/uncatalogued)
CORPORA = ("submissions", "variants", "outside", "r_corpus", "r_idioms", "uncatalogued")
SECRET = bytes(range(32))  # a test secret: the identities' seeds come from it as a batch's do


def corpus_files() -> list[Path]:
    """Every question-1 file of the corpora that is not an attack on the grader (R's odd layouts, in
    r_corpus/shapes, are the intake's tests, and their functions are correct_matrix.R's)."""
    return [p for c in CORPORA for suffix in ("*.py", "*.R") for p in sorted((HERE / c).glob(suffix))
            if not p.name.startswith(("adv_", "_"))]


def identities(count: int) -> list[str]:
    """Identities as the intake makes them: Moodle and Canvas ids, and plain names."""
    kinds = ("moodle:{}", "canvas:{}", "aluno{}")
    return [kinds[i % 3].format(1874501 + 7919 * i) for i in range(count)]


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"spread_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class _Judged:
    case: object
    expected: np.ndarray
    tol: float


@lru_cache(maxsize=64)
def _judged(seed: int) -> dict[tuple[str, str], list[_Judged]]:
    """Each case of a seed with its expected output and tolerance, computed once for every file."""
    tests: dict[tuple[str, str], list[_Judged]] = {}
    for case in all_cases(seed):
        expected = case.reference_output()
        tests.setdefault((case.function, case.group), []).append(
            _Judged(case, expected, tolerance(case.function, case.args, case.kwargs, expected)))
    return tests


def _passes(function, judged: _Judged) -> bool:
    case = judged.case
    try:
        with np.errstate(all="ignore"):
            value = function(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
        dtype = str(getattr(value, "dtype", type(value).__name__))
        if hasattr(value, "detach"):
            value = value.detach().cpu()
        got = np.asarray(value, dtype=np.float64)
    except Exception:  # noqa: BLE001 - the student's code failing the case, as in the sandbox
        return False
    if case.function == "causal_mask":  # the finite-mask rule lives in the check
        return check(case, Outcome(Status.OK, value=got, dtype=dtype), Limits()).passed
    return passes(got, judged.expected, judged.tol)


def total(module, seed: int, rubric=None) -> float:
    """The file's total on the cases of ``seed`` (every test all or nothing). Every case is called, in the
    grader's order, as the sandbox calls them: a file that keeps state sees the same calls."""
    rubric = rubric or rubric_mod.load()
    tests = _judged(seed)
    score = 0.0
    for function, group, points in rubric.tests():
        student = getattr(module, function, None)
        if callable(student) and all([_passes(student, j) for j in tests.get((function, group), [])]):
            score += points
    return score


def graded_totals(paths: list[Path], names: list[str]) -> dict[Path, list[float]]:
    """Each R file's totals, one real grading per file and identity (a fresh R each time), two at once as a batch
    of ``--jobs 2`` grades them, the next one started as soon as a worker is free: a grading keeps about one core
    busy (four at once were no faster than two)."""
    from concurrent.futures import ThreadPoolExecutor

    from grader.grade import GradeConfig, grade
    from grader.sandbox import launch

    rubric = rubric_mod.load()
    config = GradeConfig(isolation="trusted", secret=SECRET, rubric=rubric)
    launcher = launch.launcher("trusted", (), rubric.imports, jobs=2)
    pairs = [(path, name) for path in paths for name in names]
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            scores = list(pool.map(lambda pair: grade(pair[0], config, student=pair[0].stem, spawner=launcher,
                                                      identity=pair[1]).score, pairs))
    finally:
        launcher.close()
    return {path: scores[i * len(names):(i + 1) * len(names)] for i, path in enumerate(paths)}


def by_total(names: list[str], scores: list[float]) -> dict[float, list[str]]:
    """Each total and the identities that got it."""
    found: dict[float, list[str]] = {}
    for name, score in zip(names, scores, strict=True):
        found.setdefault(score, []).append(name)
    return found


def totals(path: Path, count: int) -> dict[float, list[str]]:
    """The file's totals under ``count`` identities: each total and the identities that got it."""
    names = identities(count)
    if path.suffix == ".py":
        rubric = rubric_mod.load()
        scores = [total(load(path), secret.case_seed(SECRET, name), rubric) for name in names]
    else:
        scores = graded_totals([path], names)[path]
    return by_total(names, scores)
