"""The uid mode, where namespaces cannot be had (a container that forbids them), tried as root on a
machine laid out like a Gradescope image: the interpreter, numpy and torch open to every user, the
grader installed from its wheel and closed to other users, the repository out of sight.

The grader under test runs inside bubblewrap only to build that layout (this test machine keeps its
Python under a closed /root); it is told to use ``--isolation uid`` and never uses namespaces for the
submissions. The attacks are the hostile corpus's, graded in a batch beside three correct students.
"""

import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pytest

from grader.sandbox import isolation, launch

from .test_hostile import ATTACKS, CORRECT, REPO, Stage, expected_score

# Without namespaces nothing keeps a submission off the network: docs/isolation.md says so.
NOT_COVERED = {"network": "the uid mode has no network isolation"}

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("bwrap") is None,
                                reason="needs root and bubblewrap to lay out the test machine")


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


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a not in NOT_COVERED])
def test_in_the_uid_mode_the_attack_changes_no_grade_and_leaves_nothing(tmp_path, attack, gradescope_like):
    stage = Stage(tmp_path, attack)
    env = {**os.environ, "GRADER_TEST_MARK": stage.mark, "TMPDIR": str(stage.tmpdir)}
    proc = subprocess.run([*gradescope_like, str(stage.submissions), "--csv", str(stage.out / "grades.csv"),
                           "--jobs", "2", "--seed", "99", "--isolation", "uid", "--timeout", "2",
                           "--import-timeout", "6"], capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    book = pd.read_csv(stage.out / "grades.csv", keep_default_na=False).set_index("student")
    for name in CORRECT:
        assert book.loc[name, "total"] == 30, f"{attack} cost {name} points: {stage.feedback(name)}"
    assert book.loc["starter", "total"] == 0
    assert book.loc[attack, "total"] == expected_score(attack)
    stage.assert_nothing_left(attack)
    leftover = [e.name for e in os.scandir("/tmp") if e.stat(follow_symlinks=False).st_uid >= launch.UID_BASE]
    assert leftover == [], f"{attack} left {leftover} in /tmp"
    # The kernel keeps one record (the uid's own keyring) of every uid that ever ran; a key the submission
    # added beside it would be a second.
    # The kernel collects an unlinked keyring asynchronously, so a count of 2 may last a moment: wait for it.
    deadline = time.monotonic() + 10
    while (extra := _uids_with_extra_keys()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert extra == {}, f"{attack} left keys"
    for kind, uid_column in (("shm", 7), ("msg", 7), ("sem", 4)):
        rows = Path("/proc/sysvipc", kind).read_text().splitlines()[1:]
        assert [r for r in rows if int(r.split()[uid_column]) >= launch.UID_BASE] == [], f"{attack} left a {kind}"


def _uids_with_extra_keys() -> dict[int, int]:
    """Sandbox uids holding more keys than their own keyring, from /proc/key-users."""
    keys = {int(uid): int(rest.split()[1].split("/")[0]) for uid, rest in
            (line.split(":", 1) for line in Path("/proc/key-users").read_text().splitlines())}
    return {uid: n for uid, n in keys.items() if uid >= launch.UID_BASE and n > 1}
