"""One submission's session (grader/sandbox/session.py) takes a hand-in, never a path: the intake reads, the
session runs what it read."""

import numpy as np

from grader.intake import HandIn
from grader.intake.notebooks import Cell
from grader.sandbox.launch import DirectLauncher
from grader.sandbox.limits import Limits
from grader.sandbox.session import Sandbox


def test_the_session_runs_the_hand_in_it_is_given_its_cells_and_helpers(handin, tmp_path):
    (tmp_path / "ana.py").write_text("from utils import TWO\n\ndef double(x):\n    return TWO * x\n")
    (tmp_path / "utils.py").write_text("TWO = 2.0\n")
    read = handin(tmp_path / "ana.py")
    with_helper = HandIn(read.name, read.cells, (("utils", "TWO = 2.0\n"),))
    launcher = DirectLauncher()
    try:
        with Sandbox(with_helper, ["double"], Limits(), spawner=launcher, imports=("numpy",)) as box:
            assert box.start().functions == ("double",)
            assert box.call("double", [np.ones((1, 2))]).value.tolist() == [[2.0, 2.0]]
    finally:
        launcher.close()


def test_a_hand_in_made_of_cells_is_run_as_one_file_whose_lines_are_the_cells_lines():
    cells = (Cell("import numpy as np\n", 1), Cell("def line(x):\n    raise ValueError('here')\n", 2))
    with Sandbox(HandIn("ana.ipynb", cells), ["line"], Limits(), isolation="trusted", imports=("numpy",)) as box:
        assert box.start().functions == ("line",)
        out = box.call("line", [np.ones(1)])
    assert out.status == "error" and out.error_type == "ValueError" and out.line == 3


def test_a_session_given_a_launcher_leaves_it_open_for_the_next_and_one_without_makes_its_own(handin, tmp_path):
    (tmp_path / "ana.py").write_text("def same(x):\n    return x\n")
    ana = handin(tmp_path / "ana.py")
    launcher = DirectLauncher()
    try:
        for _ in range(2):  # a batch's launcher outlives each student's session
            with Sandbox(ana, ["same"], Limits(), spawner=launcher, imports=()) as box:
                assert box.call("same", [np.ones(2)]).value.tolist() == [1.0, 1.0]
    finally:
        launcher.close()
    with Sandbox(ana, ["same"], Limits(), isolation="trusted", imports=()) as box:
        assert box.start().functions == ("same",)
