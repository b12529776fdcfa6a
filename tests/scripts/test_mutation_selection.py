"""The tests each mutant runs in `make mutation` (scripts/mutation_selection.py): its module's own, fastest first,
and nothing changed outside a mutant's run. The plugin is loaded into a real pytest run here, as mutmut loads it."""

import importlib.util
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("mutation_selection", REPO / "scripts" / "mutation_selection.py")
selection = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(selection)


@pytest.mark.parametrize("mutant, module", [
    ("grader.tolerance.x__finite_max__mutmut_4", "grader.tolerance"),
    ("mha.reference.x_softmax__mutmut_23", "mha.reference"),
    ("grader.mistakes.xǁVariantǁrun__mutmut_2", "grader.mistakes"),  # a method's mangled name
])
def test_a_mutants_module_is_its_name_up_to_the_mangled_function(mutant, module):
    assert selection.mutated_module(mutant) == module


def test_a_test_is_chosen_by_its_file_or_a_folder_above_it_never_by_a_longer_name():
    assert selection.chosen("tests/grader/test_checks.py::test_a[1]", ["tests/grader/test_checks.py"])
    assert selection.chosen("tests/grader/functions/test_checks.py::test_a", ["tests/grader/functions/"])
    assert not selection.chosen("tests/grader/test_checks_more.py::test_a", ["tests/grader/test_checks.py"])
    assert not selection.chosen("tests/grader/test_checks.py::test_a", ["tests/mha/test_reference.py"])


def test_every_mutated_module_names_its_tests_and_the_selection_is_exactly_those_tests():
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]
    mutmut, chosen = tool["mutmut"], tool["mutation"]["tests"]
    modules = set()
    for path in mutmut["only_mutate"]:
        for source in mutmut["source_paths"]:  # src/mha/reference.py is imported as mha.reference
            if source != "grader":
                path = path.removeprefix(source + "/")
        modules.add(path.removesuffix(".py").replace("/", "."))
    assert set(chosen) == modules
    files = [arg for arg in mutmut["pytest_add_cli_args_test_selection"] if arg.startswith("tests/")]
    assert sorted(files) == sorted({f for fs in chosen.values() for f in fs})
    assert all((REPO / f).exists() for f in files)
    assert mutmut["pytest_add_cli_args"] == ["-p", "scripts.mutation_selection"] and "scripts" in mutmut["also_copy"]


def _run(project: Path, mutant: str | None) -> list[str]:
    """The tests a pytest run in ``project`` with the plugin ran, in their order, with MUTANT_UNDER_TEST set so."""
    env = {k: v for k, v in os.environ.items() if k != "MUTANT_UNDER_TEST"}
    if mutant is not None:
        env["MUTANT_UNDER_TEST"] = mutant
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-p", "scripts.mutation_selection", "--rootdir=.", "tests"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 5), proc.stdout + proc.stderr
    return [line.split(" ")[0] for line in proc.stdout.splitlines() if " PASSED" in line]


@pytest.fixture
def project(tmp_path) -> Path:
    """Two modules' tests, mutmut's measured durations (the slow test first in the file), and the table."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_fast.py").write_text("def test_slow():\n    pass\n\n\ndef test_quick():\n    pass\n")
    (tmp_path / "tests" / "test_other.py").write_text("def test_other():\n    pass\n")
    (tmp_path / "pyproject.toml").write_text('[tool.mutation.tests]\n"pkg.fast" = ["tests/test_fast.py"]\n'
                                             '"pkg.none" = []\n')
    durations = {"tests/test_fast.py::test_slow": 9.0, "tests/test_fast.py::test_quick": 0.1}
    (tmp_path / selection.STATS).write_text(json.dumps({"duration_by_test": durations}))
    return tmp_path


def test_a_mutant_runs_only_its_modules_tests_fastest_first(project):
    assert _run(project, "pkg.fast.x_f__mutmut_1") == ["tests/test_fast.py::test_quick",
                                                       "tests/test_fast.py::test_slow"]


def test_a_mutant_whose_module_names_no_test_runs_none(project):
    assert _run(project, "pkg.none.x_f__mutmut_1") == []


@pytest.mark.parametrize("mutant", [None, "stats"])  # no mutant: a plain run, mutmut's stats run
def test_outside_a_mutants_run_every_test_runs_in_its_own_order(project, mutant):
    assert _run(project, mutant) == ["tests/test_fast.py::test_slow", "tests/test_fast.py::test_quick",
                                     "tests/test_other.py::test_other"]


def test_a_mutated_module_without_an_entry_is_refused_by_name(project):
    env = {**os.environ, "MUTANT_UNDER_TEST": "pkg.unlisted.x_f__mutmut_1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p",
                           "scripts.mutation_selection", "--rootdir=.", "tests"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "pkg.unlisted is mutated but [tool.mutation.tests] in pyproject.toml names no tests" in proc.stderr
