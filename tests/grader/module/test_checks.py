"""The comparisons question 2's weight-free checks (and the whole model's) judge by, in this process: when two runs
count as moved, and the first position that saw later inputs."""

import ast
from pathlib import Path

import numpy as np

from grader.module.checks import SAME, first_leak, moved


def test_runs_move_beyond_float_noise_relative_to_their_size_and_matching_nans_do_not():
    a = np.full((3, 4), 100.0)
    assert not moved(a, a + 0.5 * SAME * 100) and moved(a, a + 2 * SAME * 100)
    small = np.full((3, 4), 1e-3)  # below 1 the scale is 1: an absolute SAME
    assert not moved(small, small + 0.5 * SAME) and moved(small, small + 2 * SAME)
    nan = np.array([np.nan, 1.0])
    assert not moved(nan, nan.copy()) and moved(nan, np.array([0.0, 1.0]))


def test_the_first_leak_is_the_earliest_position_that_moved_when_only_later_inputs_changed():
    T = 5
    base = np.zeros((T, 2))  # (T, C)
    assert first_leak(base, [base.copy() for _ in range(T - 1)]) is None
    changed = [base.copy() for _ in range(T - 1)]
    changed[2][1] += 1.0  # inputs after position 2 (from 0) changed, and position 1 moved
    changed[3][4] += 1.0  # position 4 is after t = 3: no leak
    assert first_leak(base, changed) == 2  # positions counted from 1


def test_no_module_of_question_2_imports_another_modules_private_names():
    """What ``model_checks`` and ``run`` share with the module's checks is public where it is defined."""
    package = Path(__file__).resolve().parents[3] / "grader" / "module"
    private = [f"{path.name}: {node.module}.{alias.name}" for path in sorted(package.glob("*.py"))
               for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ImportFrom)
               for alias in node.names if alias.name.startswith("_") and node.module != "__future__"]
    assert private == []
