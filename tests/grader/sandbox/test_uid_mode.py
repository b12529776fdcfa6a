"""The uid mode, where namespaces cannot be had (a container that forbids them), tried as root on a
machine laid out like a Gradescope image: the interpreter, numpy and torch open to every user, the
grader installed from its wheel and closed to other users, the repository out of sight.

The grader under test runs inside bubblewrap only to build that layout (this test machine keeps its
Python under a closed /root); it is told to use ``--isolation uid`` and never uses namespaces for the
submissions. The attacks are the hostile corpus's, graded in a batch beside three correct students.
"""

import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from grader.sandbox import isolation, uid_lifecycle

from ..conftest import SUBMISSIONS, needs_system
from ..test_hostile import ATTACKS, CORRECT, REPO, Graded, Stage, expected_score, gradebook

# Without namespaces nothing keeps a submission off the network: docs/isolation.md says so.
NOT_COVERED = {"network": "the uid mode has no network isolation"}

pytestmark = needs_system(os.geteuid() != 0 or shutil.which("bwrap") is None,
                          "needs root and bubblewrap to lay out the test machine")


def open_path_args(*paths: Path, needed: Iterable[Path] = ()) -> list[str]:
    """bwrap arguments that make every closed folder on the way to each of ``paths`` passable, nothing more:
    each such folder becomes an empty tmpfs (0755) with only the children on the way bound back into it.

    This covers a clone under a 0700 home. A file of ``needed`` (what the other user must read, below one of
    ``paths``) that is closed to others itself, as in a clone made under umask 077, cannot be opened short
    of changing the clone: the test is then skipped, with the file named."""
    paths = [Path(p) for p in paths]
    for path in needed:
        closed = _closed_below(next((p for p in paths if Path(path).is_relative_to(p)), Path(path)), Path(path))
        if closed:
            pytest.skip(f"{closed} is not readable by other users (a clone made under umask 077?): "
                        "this test needs it open to other users, as Gradescope's image has it")
    children: dict[Path, set[str]] = {}  # closed folder -> the children to bind back
    for path in paths:
        for parent in path.parents:
            if str(parent) != "/" and not parent.stat().st_mode & stat.S_IXOTH:
                children.setdefault(parent, set()).add(path.relative_to(parent).parts[0])
    args = []
    for folder in sorted(children, key=lambda f: len(f.parts)):  # outer folders first: inner ones mount on them
        args += ["--tmpfs", str(folder)]
        for child in sorted(children[folder]):
            args += ["--ro-bind", str(folder / child), str(folder / child)]
    return args


def _closed_below(top: Path, path: Path) -> Path | None:
    """The first folder from ``top`` down to ``path`` that other users cannot pass, or ``path`` if they cannot
    read it; None when they can."""
    for folder in [*reversed(path.parents)]:
        if folder.is_relative_to(top) and not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None if path.stat().st_mode & stat.S_IROTH else path


@pytest.fixture(scope="module")
def gradescope_like(wheel, wheel_venv):
    """The argv prefix that runs the wheel's grader on such a machine."""
    python = wheel_venv(wheel)
    venv = Path(REPO) / ".venv"
    layout = ["bwrap", "--dev-bind", "/", "/", "--die-with-parent", "--unshare-pid", "--proc", "/proc",
              *open_path_args(Path(os.path.realpath(python)), venv, needed=isolation.package_origins()),
              # the checkout is out of sight; only its virtualenv (numpy, torch) stays, open to all
              "--perms", "0711", "--tmpfs", REPO, "--ro-bind", str(venv), str(venv)]
    return [*layout, str(python), "-m", "grader"]


def test_the_uid_mode_can_run_there(gradescope_like):
    probe = "from grader.sandbox import isolation; print(isolation.uid_problem())"
    got = subprocess.run([*gradescope_like[:-2], "-c", probe], capture_output=True, text=True, timeout=60)
    assert got.stdout.strip() == "None", got.stdout + got.stderr


def test_the_uid_mode_refuses_while_the_graders_own_files_are_open_to_others(monkeypatch):
    monkeypatch.setattr(isolation, "_open_to_others", lambda path: True)
    isolation.uid_problem.cache_clear()
    try:
        problem = isolation.uid_problem()
    finally:
        isolation.uid_problem.cache_clear()
    assert problem.key == "isolation.grader_open" and "chmod -R o-rwx" in problem.text("en")
    # question 1's case generator, in a subfolder of the grader: the whole package is what to close
    assert problem.values["path"] == isolation.GRADER / "functions" / "cases.py"
    assert problem.values["folder"] == isolation.GRADER


# Each child says which uid it ran as, first thing: the checks below look at those uids only (other graders on
# this machine may have left things under uids of their own).
SAYS_ITS_UID = 'print(f"sandbox-uid={__import__(\'os\').getuid()}", flush=True)\n'
# Where any user may write on a usual machine; the checks walk each, through every folder others may pass.
WRITABLE = ("/tmp", "/var/tmp", "/run/lock", "/var/lock", "/dev/shm", "/dev/mqueue", "/var/crash")


def uids_used(results: Path, student: str = "*") -> set[int]:
    """The uids the children of a batch (or of one ``student``) said they ran as: their printed output is in
    their results JSONs."""
    return {int(u) for path in results.glob(f"{student}.json")
            for u in re.findall(r"sandbox-uid=(\d+)", path.read_text())}


def owned_by(uids: set[int]) -> list[str]:
    """Every file, link or folder any of ``uids`` owns anywhere a uid could have written."""
    found, todo = [], [p for p in WRITABLE if os.path.isdir(p) and not os.path.islink(p)]
    while todo:
        with os.scandir(todo.pop()) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if info.st_uid in uids:
                    found.append(entry.path)
                elif stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IXOTH:
                    todo.append(entry.path)
    return found


def keys_of(uids: set[int]) -> dict[int, str]:
    """The /proc/key-users line of each of ``uids`` that still has one (any key at all), waiting a moment: the
    kernel collects invalidated keys asynchronously."""
    deadline = time.monotonic() + 10
    while True:
        lines = dict(line.split(":", 1) for line in Path("/proc/key-users").read_text().splitlines())
        held = {int(u): rest.strip() for u, rest in lines.items() if int(u) in uids}
        if not held or time.monotonic() > deadline:
            return held
        time.sleep(0.2)


def message_queues_of(uids: set[int]) -> list[str]:
    """The POSIX message queues any of ``uids`` owns: their file system, mounted in a mount namespace of its own."""
    listed = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                             "mount -t mqueue none /mnt && find /mnt -mindepth 1 -printf '%U %p\\n'"],
                            capture_output=True, text=True, timeout=30, check=True).stdout.splitlines()
    return [line for line in listed if int(line.split()[0]) in uids]


def ipc_of(uids: set[int]) -> list[str]:
    rows = []
    for kind, uid_column in (("shm", 7), ("msg", 7), ("sem", 4)):
        rows += [f"{kind}: {r}" for r in Path("/proc/sysvipc", kind).read_text().splitlines()[1:]
                 if int(r.split()[uid_column]) in uids]
    return rows


COVERED = [attack for attack in ATTACKS if attack not in NOT_COVERED]


@pytest.fixture(scope="module")
def uid_class(tmp_path_factory, gradescope_like) -> Graded:
    """Every attack the uid mode covers in one class, beside three correct students and the starter file, each
    saying its uid first, graded once in the uid mode with two jobs; what it left behind looked at at once."""
    stage = Stage(tmp_path_factory.mktemp("uid_class"), *COVERED)
    for path in stage.submissions.glob("*.py"):
        path.write_text(SAYS_ITS_UID + path.read_text())
    stage.before = stage.fingerprint()
    env = {**os.environ, "GRADER_TEST_MARK": stage.mark, "TMPDIR": str(stage.tmpdir)}
    proc = subprocess.run([*gradescope_like, str(stage.submissions), "--csv", str(stage.out / "grades.csv"),
                           "--jobs", "2", "--seed", "99", "--isolation", "uid", "--timeout", "2",
                           "--import-timeout", "6"], capture_output=True, text=True, env=env, timeout=600)
    return Graded(stage, proc, stage.left_behind())


def test_in_the_uid_mode_a_class_of_attackers_costs_no_honest_student_and_leaves_nothing(uid_class):
    book, stage = gradebook(uid_class), uid_class.stage
    for name in CORRECT:
        assert book.loc[name, "total"] == 30, f"{name} lost points: {stage.feedback(name)}"
    assert book.loc["starter", "total"] == 0
    assert uid_class.left == []
    uids = uids_used(stage.out / "grades_results")
    assert uids and all(u >= uid_lifecycle.FIRST_UID for u in uids), uids
    assert owned_by(uids) == [], "files left"
    assert keys_of(uids) == {}, "keys left"
    assert ipc_of(uids) == [], "System V objects left"


@pytest.mark.parametrize("attack", COVERED)
def test_in_the_uid_mode_the_attack_gets_only_its_own_points(uid_class, attack):
    book, results = gradebook(uid_class), uid_class.stage.out / "grades_results"
    assert book.loc[attack, "total"] == expected_score(attack), uid_class.stage.feedback(attack)
    said = uids_used(results, attack)
    assert said and all(u >= uid_lifecycle.FIRST_UID for u in said), \
        f"{attack} did not say a uid of the grader's: {uid_class.stage.feedback(attack)}"


# Leaves what the first round's leave_things_behind did not reach: files in /run/lock, deep in a world-writable
# tree someone else made (DVC's /var/tmp/dvc/repo), in a folder of its own opened to all, a link to the test's
# own file, a FIFO, a POSIX message queue; and keys in every keyring a uid can reach, the user keyring closed
# even to its owner.
LEAVES_EVERYWHERE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
keyctl, add_key = 250, 248
def ctl(*args):
    return libc.syscall(keyctl, *[ctypes.c_long(a) for a in args])
for ring in (-4, -5, -3):  # @u, @us, @s
    libc.syscall(add_key, b"user", b"left", b"for the next student", 20, ctypes.c_long(ring))
persistent = ctl(22, -1, -3)
libc.syscall(add_key, b"user", b"left", b"for days", 8, ctypes.c_long(persistent))
nested = libc.syscall(add_key, b"keyring", b"nested", None, 0, ctypes.c_long(persistent))
libc.syscall(add_key, b"user", b"deep", b"x", 1, ctypes.c_long(nested))
ctl(5, -4, 0)  # the user keyring: no permission left, not even its owner's
rt = ctypes.CDLL("librt.so.1")
rt.mq_open(("/left-" + MARK).encode(), os.O_CREAT | os.O_RDWR, 0o666, None)  # a POSIX message queue
for folder in ("/run/lock", DEEP, "/dev/shm", "/var/tmp"):
    try:
        with open(os.path.join(folder, "left-" + MARK), "x") as f:
            f.write("left for the next student")
    except OSError:
        pass
own = "/tmp/open-" + MARK
os.makedirs(own + "/a/b")
os.chmod(own, 0o777)
open(own + "/a/b/left", "w").close()
os.symlink(TARGET, "/tmp/link-" + MARK)
os.mkfifo("/dev/shm/fifo-" + MARK)
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the attack's keyctl numbers are x86_64's")
def test_in_the_uid_mode_nothing_left_anywhere_writable_or_in_the_kernels_keys_outlives_the_uid(
        tmp_path, gradescope_like):
    mark = f"uidtest{os.getpid()}"
    deep = Path("/var/tmp", f"{mark}-dvc", "repo")  # a world-writable tree another tool made, as DVC does
    deep.mkdir(parents=True)
    for folder in (deep.parent, deep):
        os.chmod(folder, 0o1777)
    target = tmp_path / "target"  # the test's own file: a link to it goes, the file stays
    target.write_text("the test's own")
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "leaver.py").write_text(SAYS_ITS_UID + f"MARK = {mark!r}\nDEEP = {str(deep)!r}\nTARGET = "
                                      f"{str(target)!r}\n" + LEAVES_EVERYWHERE)
    (folder / "ok.py").write_text(SAYS_ITS_UID + (SUBMISSIONS / "correct_numpy.py").read_text())
    try:
        proc = subprocess.run([*gradescope_like, str(folder), "--csv", str(tmp_path / "grades.csv"), "--seed", "1",
                               "--isolation", "uid", "--lang", "en"], capture_output=True, text=True, timeout=240)
        assert proc.returncode == 0, proc.stderr[-2000:]
        uids = uids_used(tmp_path / "grades_results")
        assert len(uids) >= 2 and uids_used(tmp_path / "grades_results", "leaver"), uids
        assert owned_by(uids) == []
        assert list(deep.iterdir()) == [] and target.read_text() == "the test's own"
        assert keys_of(uids) == {}
        assert message_queues_of(uids) == []
    finally:
        shutil.rmtree(deep.parent, ignore_errors=True)
        for path in Path("/tmp").glob(f"*-{mark}"):
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() and not path.is_symlink() else path.unlink()
