"""A batch grades a submission that ran out of time beside others once more, alone, and that grade counts.

The submission under test is correct but slow to import the first time only (it leaves a marker file,
which the trusted mode lets it write), so the first pass times out for certain and the second does not:
the regrade, not the machine's load, decides the outcome.
"""

import pandas as pd

from .conftest import SUBMISSIONS

# SIGALRM blocked: a wait the per-statement budget cannot interrupt (a long call into C), so the whole
# import runs out of time rather than one statement being skipped.
SLOW_ONCE = """\
import os, signal, time
if not os.path.exists({marker!r}):
    open({marker!r}, "w").close()
    signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGALRM}})
    time.sleep(60)
"""


def _stage(tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    marker = tmp_path / "imported-once"
    correct = (SUBMISSIONS / "correct_numpy.py").read_text()
    (folder / "slow_once.py").write_text(SLOW_ONCE.format(marker=str(marker)) + correct)
    (folder / "steady.py").write_text(correct)
    return folder


def _grade(run_grader, tmp_path, jobs: int):
    folder = _stage(tmp_path)
    csv = tmp_path / "grades.csv"
    proc = run_grader(folder, "--csv", csv, "--jobs", jobs, "--seed", 5, "--isolation", "trusted",
                      "--import-timeout", "2", "--lang", "en", timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc, pd.read_csv(csv, keep_default_na=False).set_index("student")


def test_beside_others_a_timed_out_submission_is_graded_again_alone_and_that_grade_counts(run_grader, tmp_path):
    proc, book = _grade(run_grader, tmp_path, jobs=2)
    assert book.loc["slow_once", "total"] == 30
    assert book.loc["steady", "total"] == 30
    assert "graded again alone" in proc.stdout
    assert "slow_once" in proc.stdout.split("graded again alone", 1)[1].splitlines()[0]
    assert "steady" not in proc.stdout.split("graded again alone", 1)[1].splitlines()[0]


def test_alone_from_the_start_a_timeout_is_the_grade(run_grader, tmp_path):
    proc, book = _grade(run_grader, tmp_path, jobs=1)
    assert book.loc["slow_once", "total"] == 0
    assert "graded again alone" not in proc.stdout
