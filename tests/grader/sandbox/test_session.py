"""The sandbox, driven directly: what the child can see, its limits, timeouts and restarts."""

import resource
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import grader
from grader import rubric
from grader.intake import HandIn
from grader.intake.notebooks import Cell
from grader.sandbox import isolation
from grader.sandbox.launch import DirectLauncher, WarmServer
from grader.sandbox.limits import GIB, Limits
from grader.sandbox.session import Sandbox

from ..conftest import needs_system

IMPORTS = rubric.load().imports  # what the default rubric lets a submission import

MODES = [pytest.param("namespaces", marks=needs_system(isolation.namespaces_problem(), "no namespaces here")),
         "trusted"]


PROBE = '''
import os, resource, sys

def _can_import(name):
    try:
        __import__(name)
        return 1.0
    except ImportError:
        return 0.0

def probe(n):
    return [[
        _can_import("mha"),
        _can_import("grader"),
        float("GRADER_TEST_SECRET" in os.environ or "PYTHONPATH" in os.environ),
        float(any(os.path.realpath(p) in (REPO, REPO + "/src", REPO + "/grader") for p in sys.path if p)),
        float(os.getcwd().startswith(REPO)),
        float(resource.getrlimit(resource.RLIMIT_AS)[0]),
        float(resource.getrlimit(resource.RLIMIT_CPU)[0]),
        float(any(m.startswith("to" + "rch") for m in sys.modules)),
    ]]

def slow(n):
    import time
    time.sleep(30)

def fine(n):
    return [[float(n)]]
'''


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "student.py"
    path.write_text(f"REPO = {str(Path(grader.__file__).resolve().parent.parent)!r}\n" + body)
    return path


@pytest.mark.parametrize("mode", MODES)
def test_child_cannot_import_the_grader_sees_no_project_path_and_runs_under_limits(handin, tmp_path, monkeypatch, mode):
    monkeypatch.setenv("GRADER_TEST_SECRET", "1")
    limits = Limits(memory_bytes=2 * GIB, cpu_seconds=50)
    with Sandbox(handin(write(tmp_path, PROBE)), ["probe"], limits, isolation=mode, imports=IMPORTS) as box:
        assert box.start().status == "ok"
        out = box.call("probe", [3])
    assert out.status == "ok"
    can_mha, can_grader, leaked_env, project_on_path, cwd_in_project, mem, cpu, torch_loaded = out.value[0]
    assert (can_mha, can_grader, leaked_env, project_on_path, cwd_in_project) == (0, 0, 0, 0, 0)
    assert mem == 2 * GIB and cpu == 50
    assert torch_loaded == 0  # numpy only: torch loads only for a batch where some submission needs it


NAMESPACE_PROBE = '''
import os
def probe(n):
    visible = [p for p in os.listdir("/proc") if p.isdigit()] if os.path.isdir("/proc") else []
    try:
        os.listdir(REPO)
        repo = 1.0
    except OSError:
        repo = 0.0
    base_site = os.listdir(BASE_SITE) if os.path.isdir(BASE_SITE) else []
    return [[float(os.getpid()), float(len(visible)), float(os.getuid()), repo, float(len(base_site))]]
'''


@needs_system(isolation.namespaces_problem(), "no namespaces here")
def test_in_namespaces_a_submission_sees_no_other_process_no_repository_and_is_not_root(handin, tmp_path):
    with WarmServer(packages=IMPORTS) as server:
        outs = []
        for _ in range(2):  # two submissions from one server see nothing of each other
            body = f"BASE_SITE = {sysconfig.get_paths(vars={'base': sys.base_prefix})['purelib']!r}\n" + NAMESPACE_PROBE
            with Sandbox(handin(write(tmp_path, body)), ["probe"], spawner=server, imports=IMPORTS) as box:
                assert box.start().status == "ok"
                outs.append(box.call("probe", [1]).value[0].tolist())
    for pid, visible, uid, repo, base_site in outs:
        # pid 2 under its own init; no process of anyone else; not root; no repository; and the base
        # interpreter's site-packages (where a global install of this project would sit) is empty
        assert pid == 2 and visible <= 2 and uid != 0 and repo == 0.0 and base_site == 0


def test_a_timeout_kills_the_child_and_the_next_call_gets_a_fresh_one(handin, tmp_path):
    with Sandbox(handin(write(tmp_path, PROBE)), ["slow", "fine"], Limits(call_timeout=0.5), imports=IMPORTS) as box:
        box.start()
        assert box.call("slow", [1]).status == "timeout"
        after = box.call("fine", [7])
        assert after.status == "ok" and after.value.tolist() == [[7.0]]
        assert box.restarts == 1


def test_a_slow_top_level_statement_is_skipped_and_the_functions_around_it_load(handin, tmp_path):
    path = write(tmp_path, "def early(x):\n    return x\nimport time\ntime.sleep(30)\ndef fine(x):\n    return x\n")
    with Sandbox(handin(path), ["early", "fine"], Limits(import_timeout=2), imports=IMPORTS) as box:
        load = box.start()
        assert load.status == "ok" and load.functions == ("early", "fine")
        assert [(s["kind"], s["line"]) for s in load.skipped] == [("timeout", 5)]  # write() adds line 1


def test_an_import_the_statement_budget_cannot_interrupt_is_a_load_timeout(handin, tmp_path):
    # SIGALRM blocked stands for a long call into C that never returns to the interpreter
    body = "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\ntime.sleep(30)\n"
    with Sandbox(handin(write(tmp_path, body)), ["fine"], Limits(import_timeout=0.5), imports=IMPORTS) as box:
        assert box.start().status == "timeout"
        assert box.call("fine", [1]).status == "not_loaded"


CONTAINERS = {  # function -> the float64 matrix it must come back as
    "as_list": [[1.0, 2.0], [3.0, 4.0]],
    "as_int_array": [[0.0, 1.0], [2.0, 3.0]],
}


def test_results_come_back_as_plain_float64_arrays_from_any_container(handin, tmp_path):
    body = ("import numpy as np\ndef as_list(n):\n    return [[1, 2], [3, 4]]\n"
            "def as_int_array(n):\n    return np.arange(4).reshape(2, 2)\n")
    with Sandbox(handin(write(tmp_path, body)), list(CONTAINERS), imports=IMPORTS) as box:
        box.start()
        got = {name: box.call(name, [1]).value for name in CONTAINERS}
    for name, expected in CONTAINERS.items():
        assert type(got[name]) is np.ndarray and got[name].dtype == np.float64, name
        assert got[name].tolist() == expected, name


def test_a_result_of_any_rank_and_any_empty_shape_numpy_allows_comes_back_whole(handin, tmp_path):
    body = ("import numpy as np\ndef deep(n):\n    return np.arange(4.0).reshape((1,) * n + (2, 2))\n"
            "def empty(n):\n    return np.zeros((n, 0))\n")
    with Sandbox(handin(write(tmp_path, body)), ["deep", "empty"], imports=IMPORTS) as box:
        box.start()
        for extra in (7, 62):  # 9 dimensions, and numpy's most (64)
            out = box.call("deep", [extra])
            assert out.status == "ok", (extra, out)
            assert out.value.shape == (1,) * extra + (2, 2) and out.value.ravel().tolist() == [0.0, 1.0, 2.0, 3.0]
        out = box.call("empty", [2_000_000])  # more rows than max_entries, but no entries
        assert out.status == "ok" and out.value.shape == (2_000_000, 0), out


def test_trusted_mode_removes_its_private_temp_dir_and_leaves_no_child(handin, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    launcher = DirectLauncher()
    box = Sandbox(handin(write(tmp_path, PROBE)), ["fine"], spawner=launcher, imports=IMPORTS)
    assert box.start().status == "ok"
    made = list((tmp_path / "tmp").iterdir())
    assert len(made) == 1 and made[0].stat().st_mode & 0o777 == 0o700
    box.close()
    launcher.close()  # its memory groups' folder too: another launcher of this process could not make its own
    assert list((tmp_path / "tmp").iterdir()) == []


@needs_system(isolation.namespaces_problem(), "no namespaces here")
def test_the_server_outlives_the_thread_that_started_it(handin, tmp_path):
    # A batch starts the server from a pool worker and grades again, alone, after the pool has ended.
    server = WarmServer(packages=IMPORTS)
    try:
        worker = threading.Thread(target=lambda: server.spawn(Limits()).end())
        worker.start()
        worker.join()
        time.sleep(1.0)  # a parent-death signal, had it followed the worker, has arrived by now
        assert server.alive()
        student = handin(write(tmp_path, "def f(X):\n    return X\n"))
        with Sandbox(student, ["f"], spawner=server, imports=IMPORTS) as box:
            assert box.start().status == "ok"
            assert box.call("f", [np.ones((1, 1))]).status == "ok"
    finally:
        server.close()


@needs_system(isolation.namespaces_problem(), "no namespaces here")
def test_a_write_to_a_child_that_stopped_reading_ends_at_the_call_deadline(handin, tmp_path):
    # After answering, the child stops reading requests (its os.read now sleeps): the next request,
    # far larger than a pipe holds, can never be written whole.
    body = "import os, time\ndef stuck(X):\n    os.read = lambda fd, n: time.sleep(60)\n    return [[1.0]]\n"
    with Sandbox(handin(write(tmp_path, body)), ["stuck"], Limits(call_timeout=0.5), imports=IMPORTS) as box:
        assert box.start().status == "ok"
        assert box.call("stuck", [np.zeros((1, 1))]).status == "ok"
        start = time.monotonic()
        assert box.call("stuck", [np.zeros((600, 600))]).status == "timeout"  # 2.9 MB
        assert time.monotonic() - start < 5


RESERVE = """
import numpy as np

def reserve(n):
    # np.empty maps n bytes without touching them: only the address-space limit can refuse it
    return [[float(np.empty(n, dtype=np.uint8).nbytes)]]
"""


@pytest.mark.parametrize("mode", MODES)
def test_memory_past_the_limit_is_a_memory_error_in_the_child_only(handin, tmp_path, mode):
    limit = 2 * GIB
    parents_limit = resource.getrlimit(resource.RLIMIT_AS)
    with Sandbox(handin(write(tmp_path, RESERVE)), ["reserve"], Limits(memory_bytes=limit), isolation=mode,
                 imports=IMPORTS) as box:
        assert box.start().status == "ok"
        within = box.call("reserve", [limit // 4])
        past = box.call("reserve", [limit])
        assert resource.getrlimit(resource.RLIMIT_AS) == parents_limit  # the child's limit is not the parent's
    assert within.status == "ok" and within.value.tolist() == [[limit // 4]]
    assert past.status == "error" and past.error_type == "MemoryError"


FORGER = '''
import json, struct, sys

def _runner_locals():
    frame = sys._getframe(1)
    while frame is not None and "token" not in frame.f_locals:
        frame = frame.f_back
    return frame.f_locals

def _forge(header, blob=b""):
    loc = _runner_locals()  # the token and call id, dug out of the runner's own frame
    data = json.dumps({"id": loc["call_id"], **header}).encode()
    import os
    os.write(loc["out_fd"], struct.pack("<16sIQ", loc["token"], len(data), len(blob)) + data + blob)
    return [[0.0]]

def absurd_shape(n):
    return _forge({"ok": True, "shape": [10**30], "dtype": "float64"})

def wrapping_shape(n):  # 2**76 elements: an int64 product wraps around to 0, matching the empty data
    return _forge({"ok": True, "shape": [2**19] * 4, "dtype": "float64"})

def lying_size(n):
    return _forge({"ok": True, "shape": [2, 2], "dtype": "float64"}, b"12345678")

def odd_fields(n):
    return _forge({"ok": False, "too_big": [1, 2], "error": {"a": 1}, "line": "x"})

def fine(n):
    return [[float(n)]]
'''


def test_frames_forged_with_the_real_token_still_carry_only_validated_numbers(handin, tmp_path):
    names = ["absurd_shape", "wrapping_shape", "lying_size", "odd_fields", "fine"]
    with Sandbox(handin(write(tmp_path, FORGER)), names, imports=IMPORTS) as box:
        assert box.start().status == "ok"
        assert box.call("absurd_shape", [1]).status == "protocol"
        assert box.call("wrapping_shape", [1]).status == "protocol"
        assert box.call("lying_size", [1]).status == "protocol"
        odd = box.call("odd_fields", [1])
        assert odd.status == "too_big" and isinstance(odd.error, str) and odd.line is None
        assert box.call("fine", [5]).value.tolist() == [[5.0]]


def test_a_result_that_cannot_become_an_array_still_says_what_type_it_was(handin, tmp_path):
    body = "import numpy as np\ndef pair(n):\n    return (np.zeros((2, 2)), np.zeros(3))\n"
    with Sandbox(handin(write(tmp_path, body)), ["pair"], imports=IMPORTS) as box:
        box.start()
        out = box.call("pair", [1])
    assert out.status == "error" and out.stage == "convert" and out.dtype == "tuple"


def test_the_whole_submission_has_a_wall_clock_limit_beyond_each_calls(handin, tmp_path):
    body = "import time\ndef nap(n):\n    time.sleep(0.5)\n    return [[1.0]]\n"
    limits = Limits(call_timeout=2.0, submission_seconds=2.5)
    with Sandbox(handin(write(tmp_path, body)), ["nap"], limits, imports=IMPORTS) as box:
        assert box.start().status == "ok"
        start = time.monotonic()
        statuses = [box.call("nap", [1]).status for _ in range(8)]
        elapsed = time.monotonic() - start
    # The limit counts from the sandbox's creation (the import included), whatever the machine's load.
    assert statuses[0] == "ok" and statuses[-1] == "not_loaded"
    assert elapsed < 3.5  # eight naps would take 4 s: the submission was stopped at its limit


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
