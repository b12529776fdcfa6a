"""The tests each mutant runs in `make mutation`: a pytest plugin that pyproject's [tool.mutmut] loads into every
pytest run of mutmut (``pytest_add_cli_args``), and that acts only on a mutant's run.

mutmut runs, for each mutant, every selected test that called the mutated function during its first, clean run,
in no set order, and stops at the first failure. Every test of the judgement calls the reference, so a mutant of
``mha.reference`` that survives ran every one of them (the slow ones included); a killed one ran a random share.
Here a mutant's run keeps only the tests its module names in [tool.mutation.tests] (its own fast unit tests), and
runs them fastest first, by the durations mutmut measured, so that a killed mutant stops at its cheapest killer.
A mutant none of its module's tests reaches ends with pytest's "no tests" (exit 5): scripts/mutation.py counts it
as not killed, never as killed.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

MARKER = "__mutmut_"  # in MUTANT_UNDER_TEST only while a mutant runs (mutmut sets "stats", "fail", "" otherwise)
STATS = "mutmut-stats.json"  # mutmut's own record, in the folder its tests run in (mutants/)


def mutated_module(mutant: str) -> str:
    """``grader.tolerance`` for ``grader.tolerance.x__finite_max__mutmut_4`` (a function's mangled name, or a
    method's, ``xǁPipelineǁrun__mutmut_2``, has no dot)."""
    return mutant.rpartition(".")[0]


def tests_by_module(pyproject: Path) -> dict[str, list[str]]:
    """[tool.mutation.tests]: each mutated module, by its import name, with the test files its mutants run."""
    return tomllib.loads(pyproject.read_text())["tool"]["mutation"]["tests"]


def chosen(nodeid: str, files: list[str]) -> bool:
    path = nodeid.split("::", 1)[0]
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in files)


@pytest.hookimpl(trylast=True)  # after tests/conftest.py has put each test in its lane
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if MARKER not in mutant:
        return
    module = mutated_module(mutant)
    files = tests_by_module(config.rootpath / "pyproject.toml").get(module)
    if files is None:
        raise pytest.UsageError(f"{module} is mutated but [tool.mutation.tests] in pyproject.toml names no tests "
                                f"for it")
    stats = config.rootpath / STATS
    durations = json.loads(stats.read_text()).get("duration_by_test", {}) if stats.exists() else {}
    kept = [item for item in items if chosen(item.nodeid, files)]
    dropped = [item for item in items if not chosen(item.nodeid, files)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    kept.sort(key=lambda item: durations.get(item.nodeid, 0.0))  # stable: equal durations keep their order
    items[:] = kept
