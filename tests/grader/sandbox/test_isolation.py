"""The second round of attacks: nothing one submission leaves is there for the next, in the namespaces
mode as root and as an ordinary user; memory counted for the whole tree, with the kernel's OOM score on
the submission's side; a batch's time bounded by a formula; feedback that cannot pass for the grader's.
(The attacks that are single files, hostile/leave_things_behind.py, memfd_bomb.py and forged_feedback.py,
also run in test_hostile.py and, as root, in the uid mode in test_uid_mode.py.)
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

from grader import rubric
from grader.sandbox import isolation, uid_lifecycle
from grader.sandbox.limits import Limits
from grader.sandbox.printable import OUTPUT_MARK
from grader.sandbox.session import Sandbox

from ..conftest import SUBMISSIONS, needs_system
from ..test_hostile import HOSTILE, REPO, Stage
from .test_uid_mode import open_path_args

IMPORTS = rubric.load().imports  # what the default rubric lets a submission import

pytestmark = needs_system(isolation.namespaces_problem(), "no namespaces here")
# What the later student looks for before answering: any file, IPC object or key an earlier one left.
READER = '''
import glob, os
found = [p for folder in ("/", "/tmp", "/var/tmp", "/dev", "/dev/shm", "/dev/mqueue", "/sandbox", "/sandbox/site",
                          os.getcwd(), os.path.expanduser("~"))
         for p in glob.glob(os.path.join(folder, "left-*"))]
for kind in ("shm", "msg", "sem"):
    try:
        found += open("/proc/sysvipc/" + kind).read().splitlines()[1:]
    except OSError:
        pass
try:
    found += [line for line in open("/proc/keys").read().splitlines() if "hostile-" in line]
except OSError:
    pass
if found:
    raise ImportError(f"found what another student left: {found[:3]}")
'''


def as_ordinary_user(argv: list[str]) -> list[str]:
    """``argv`` run by an unprivileged uid of no account (this machine's Python lies under a closed /root)."""
    uid = uid_lifecycle.free_uid()
    python = Path(os.path.realpath(sys.executable))
    # the grader runs from this checkout (its editable install), which may lie in a closed home
    layout = open_path_args(python, Path(REPO), needed=[*isolation.package_origins(), Path(isolation.__file__)])
    return ["bwrap", "--dev-bind", "/", "/", "--die-with-parent", *layout,
            shutil.which("setpriv"), f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *argv]


def open_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="shared-nothing-", dir="/tmp"))
    folder.chmod(0o777)
    return folder


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@pytest.mark.parametrize("user", ["root", "ordinary"])
def test_nothing_one_submission_leaves_is_there_for_the_next(user):
    if user == "root" and os.geteuid() != 0:
        pytest.skip("needs root")
    base = open_folder()
    try:
        stage = Stage(base, "leave_things_behind")
        for d in (stage.submissions, stage.out, stage.tmpdir):
            d.chmod(0o777)
        (stage.submissions / "reader.py").write_text(READER + (SUBMISSIONS / "correct_numpy.py").read_text())
        stage.before = stage.fingerprint()
        argv = [sys.executable, "-m", "grader", str(stage.submissions), "--csv", str(stage.out / "grades.csv"),
                "--jobs", "1", "--seed", "5", "--timeout", "2", "--import-timeout", "6", "--lang", "en",
                "--isolation", "namespaces"]
        env = {**os.environ, "GRADER_TEST_MARK": stage.mark, "TMPDIR": str(stage.tmpdir), "HOME": str(stage.tmpdir)}
        proc = subprocess.run(as_ordinary_user(argv) if user == "ordinary" else argv, capture_output=True,
                              text=True, env=env, timeout=300, cwd=stage.tmpdir)
        assert proc.returncode == 0, proc.stderr[-2000:]
        book = pd.read_csv(stage.out / "grades.csv", keep_default_na=False).set_index("student")
        assert book.loc["reader", "total"] == 30, stage.feedback("reader")
        assert book.loc["leave_things_behind", "total"] == 0
        for name in ("ok_numpy", "ok_lists", "ok_numpy_2"):
            assert book.loc[name, "total"] == 30
        left = [p for folder in ("/tmp", "/var/tmp", "/dev/shm", REPO, str(stage.out), str(stage.submissions))
                for p in Path(folder).glob(f"left-{stage.mark}")]
        assert left == []
        ipc = "".join(Path("/proc/sysvipc", k).read_text() for k in ("shm", "msg", "sem"))
        assert not re.search(r"\b(130048000[0-2]|0x4d48000[0-2])\b", ipc), "a System V object outlived the batch"
        assert stage.mark not in Path("/proc/keys").read_text()
        stage.assert_nothing_left("leave_things_behind")
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
def test_an_ordinary_users_sandbox_has_a_read_only_root_and_a_private_tmp():
    probe = open_folder()
    try:
        student = probe / "probe.py"
        student.write_text('''
import os
def causal_mask(n):
    wrote = []
    for folder in ("/", "/sandbox", "/sandbox/site", "/dev", "/dev/shm", "/tmp", "/usr", "/dev/mqueue"):
        try:
            open(os.path.join(folder, "probe"), "w").close()
            wrote.append(folder)
        except OSError:
            pass
    raise RuntimeError(f"WROTE {wrote} SAW {sorted(os.listdir('/tmp'))}")
''')
        for _ in range(2):  # the second run must not see the first one's files
            proc = subprocess.run(as_ordinary_user([sys.executable, "-m", "grader", str(student), "--lang", "en",
                                                    "--isolation", "namespaces", "--json", str(probe / "r.json")]),
                                  capture_output=True, text=True, timeout=120, cwd=probe)
            said = json.loads((probe / "r.json").read_text())
            found = re.search(r"WROTE (\[.*?\]) SAW (\[.*?\])", json.dumps(said))
            assert found, proc.stderr[-1000:]
            assert found[1] == "['/dev/shm', '/tmp']", found[1]
            assert found[2] in ("['work']", "['probe', 'work']"), found[2]  # its own /tmp: only its work dir
    finally:
        shutil.rmtree(probe, ignore_errors=True)


FORKS_AND_TRIES_TO_LOWER = '''
import os, time
if os.fork() == 0:
    time.sleep(30)
    os._exit(0)
try:
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("0")
except OSError:
    pass

def causal_mask(n):
    return [[0.0]]
'''


def _in_submission_groups(older: frozenset[str] = frozenset()) -> dict[int, str]:
    """pid -> oom_score_adj of every process in one of this grader's memory groups but those of the folders
    ``older`` names (another launcher's of the same test session, alive meanwhile)."""
    found = {}
    for entry in os.listdir("/proc"):
        try:
            folder = re.search(rf"mha-grader-{os.getpid()}-\d+(?=/)", Path(f"/proc/{entry}/cgroup").read_text())
            if entry.isdigit() and folder and folder.group() not in older:
                found[int(entry)] = Path(f"/proc/{entry}/oom_score_adj").read_text().strip()
        except OSError:
            pass
    return found


def _own_memory_folders() -> frozenset[str]:
    own = Path("/sys/fs/cgroup/memory") / Path("/proc/self/cgroup").read_text().split(":memory:")[1].split()[0][1:]
    return frozenset(p.name for p in own.glob(f"mha-grader-{os.getpid()}-*"))


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@needs_system(os.geteuid() != 0, "a memory cgroup here needs root (cgroup v1)")
@pytest.mark.parametrize("mode", ["namespaces"])  # trusted: the child is the grader's own uid, root may lower it
def test_every_process_of_a_submission_is_in_its_memory_group_and_first_for_the_oom_killer(handin, tmp_path, mode):
    student = tmp_path / "student.py"
    student.write_text(FORKS_AND_TRIES_TO_LOWER)
    older = _own_memory_folders()
    with Sandbox(handin(student), ["causal_mask"], Limits(), isolation=mode, imports=IMPORTS) as box:
        assert box.start().status == "ok"
        placed = _in_submission_groups(older)
        assert len(placed) >= 2, placed  # the submission and its child at least
        assert set(placed.values()) == {"1000"}, placed
    deadline = time.monotonic() + 5
    while _in_submission_groups(older) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _in_submission_groups(older) == {}
    assert _own_memory_folders() <= older, "the submission's memory groups outlived it"


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
def test_a_batch_of_slow_submissions_ends_within_its_stated_bound(tmp_path):
    """Every call sleeps just inside the call limit: the budget, not the calls, bounds the submission,
    and it is graded again (alone) at most once."""
    stage = Stage(tmp_path, "forged_feedback")
    slow = "import time\n" + "".join(f"def {f}(*args, **kwargs):\n    time.sleep(0.9)\n    return [[0.0]]\n"
                                     for f in ("project", "scaled_scores", "causal_mask", "softmax",
                                               "attention_weights", "attention_head", "multi_head_attention"))
    for name in ("slow_a", "slow_b"):
        (stage.submissions / f"{name}.py").write_text(slow)
    budget, jobs, count = 4.0, 2, len(list(stage.submissions.glob("*.py")))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "grader", str(stage.submissions), "--csv",
                           str(stage.out / "grades.csv"), "--jobs", str(jobs), "--seed", "5", "--timeout", "1",
                           "--budget", str(budget), "--lang", "en"], capture_output=True, text=True, timeout=300)
    seconds = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-2000:]
    book = pd.read_csv(stage.out / "grades.csv", keep_default_na=False).set_index("student")
    assert book.loc["ok_numpy", "total"] == 30 and book.loc["slow_a", "total"] == 0
    again = re.search(r"graded again alone.*?: (.*)", proc.stdout)
    regraded = again[1].split(", ") if again else []
    assert set(regraded) <= {"slow_a", "slow_b"}
    bound = -(-count // jobs) * budget + len(regraded) * budget  # docs/instructors.md: "Budgets"
    assert seconds < bound + 30, f"{seconds:.1f} s against a bound of {bound:.0f} s (+30 s to start)"
    assert "left" in proc.stderr or not proc.stderr.strip()


def test_printed_output_is_marked_as_the_submissions_own_in_plain_text(run_grader, tmp_path):
    stage = Stage(tmp_path, "forged_feedback")
    stage.grade(run_grader, stage.attacker, "--json", stage.out / "results.json")
    raw = (stage.out / "results.json").read_text(encoding="utf-8")
    result = json.loads(raw)
    assert result["output_format"] == "text" and {t["output_format"] for t in result["tests"]} == {"text"}
    printed = result["output"].split("follow:\n", 1)[1].split("\n\n")[0].splitlines()
    assert len(printed) >= 4 and all(line.startswith(OUTPUT_MARK) for line in printed), printed
    invisible = "\u200b\u200c\u200d\u2060\ufeff"
    hidden = [c for c in result["output"] if 0xE0000 <= ord(c) <= 0xE007F or c in invisible]
    assert hidden == []
    assert not any(line.startswith("Total: 30") for line in result["output"].splitlines())


def test_the_hostile_files_of_this_round_are_in_the_corpus():
    assert {"leave_things_behind", "memfd_bomb", "forged_feedback"} <= {p.stem for p in HOSTILE.glob("*.py")}
