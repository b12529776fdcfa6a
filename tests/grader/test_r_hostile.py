"""The hostile corpus's attacks written in R (tests/grader/corpora/r_hostile/), against a grader this test starts.

One batch: two correct students (one Python, one R), the R starter file and every attack, each attack's
file being its constants (MARK, REPO, SUBMISSIONS, OUT, PORT), the correct functions of ``_correct.R`` and
then the attack, whose definitions win. No attack changes another student's grade, earns what it did not
compute, writes outside its sandbox, reaches the network or outlives grading.
"""

import json
import os
import re
import shutil
import socket
import time
from pathlib import Path

import pandas as pd
import pytest

import grader
from grader import template
from grader.sandbox import isolation, r_language

from .conftest import CORPORA, SUBMISSIONS, needs_system

HOSTILE = CORPORA / "r_hostile"
ATTACKS = sorted(p.stem for p in HOSTILE.glob("*.R") if not p.stem.startswith("_"))
REPO = str(Path(grader.__file__).resolve().parent.parent)
R_PROGRAM = "/bin/exec/R"

pytestmark = [
    pytest.mark.skipif(r_language.find() is None, reason=f"R is not installed: apt-get install {r_language.PACKAGES}"),
    needs_system(isolation.namespaces_problem(), "no namespaces here"),
]


def expected_score(name: str) -> float:
    return float(re.search(r"expected (\d+)", (HOSTILE / f"{name}.R").read_text(), re.IGNORECASE).group(1))


def r_processes() -> set[str]:
    """Every running R interpreter on this machine (R's own program, as the sandbox starts it)."""
    found = set()
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.readlink(f"/proc/{entry}/exe").endswith(R_PROGRAM):
                found.add(entry)
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def attacked(run_grader, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("r_hostile")
    mark = "hostile-" + os.urandom(8).hex()
    submissions, out, tmpdir = tmp / "submissions", tmp / "out", tmp / "tmpdir"
    for folder in (submissions, out, tmpdir):
        folder.mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    constants = (f'MARK <- "{mark}"\nREPO <- "{REPO}"\nSUBMISSIONS <- "{submissions}"\nOUT <- "{out}"\n'
                 f"PORT <- {listener.getsockname()[1]}\n")
    correct = (HOSTILE / "_correct.R").read_text()
    for attack in ATTACKS:
        body = (HOSTILE / f"{attack}.R").read_text()
        kept = "" if expected_score(attack) == 0 else correct  # an attack that implements nothing gets nothing
        (submissions / f"{attack}.R").write_text(constants + kept + body)
    shutil.copy(SUBMISSIONS / "correct_numpy.py", submissions / "ok_python.py")
    shutil.copy(CORPORA / "r_corpus" / "correct_matrix.R", submissions / "ok_r.R")
    (submissions / "starter.R").write_text(template.render_r("en"))
    before = {p.name: p.read_bytes() for p in submissions.iterdir()}
    already = r_processes()
    proc = run_grader(submissions, "--csv", out / "grades.csv", "--jobs", 2, "--seed", 7_203_114, "--timeout", 2,
                      "--import-timeout", 6, "--lang", "en", env={"GRADER_TEST_MARK": mark, "TMPDIR": str(tmpdir)},
                      timeout=600)
    time.sleep(1)
    connections = []
    try:
        while True:
            conn, _ = listener.accept()
            connections.append(conn.recv(100))
            conn.close()
    except (TimeoutError, BlockingIOError):
        pass
    finally:
        listener.close()
    return {"proc": proc, "out": out, "mark": mark, "submissions": submissions, "before": before,
            "tmpdir": tmpdir, "connections": connections, "left": r_processes() - already}


def test_the_batch_finishes_and_every_honest_student_gets_full_marks(attacked):
    assert attacked["proc"].returncode == 0, attacked["proc"].stderr[-2000:]
    book = pd.read_csv(attacked["out"] / "grades.csv", keep_default_na=False).set_index("student")
    assert book.loc["ok_python", "total"] == 30 and book.loc["ok_r", "total"] == 30
    assert book.loc["starter", "total"] == 0


@pytest.mark.parametrize("attack", ATTACKS)
def test_each_r_attack_earns_only_what_it_computes(attacked, attack):
    book = pd.read_csv(attacked["out"] / "grades.csv", keep_default_na=False).set_index("student")
    result = json.loads((attacked["out"] / "grades_results" / f"{attack}.json").read_text())
    assert book.loc[attack, "total"] == expected_score(attack), result["output"][:3000]
    assert book.loc[attack, "error"] == ""


def test_no_r_attack_writes_outside_its_sandbox_reaches_the_network_or_outlives_grading(attacked):
    mark = attacked["mark"]
    assert {p.name: p.read_bytes() for p in attacked["submissions"].iterdir()} == attacked["before"]
    assert sorted(p.name for p in attacked["out"].iterdir()) == ["grades.csv", "grades.run.json", "grades_results"]
    assert list(attacked["tmpdir"].iterdir()) == []
    assert attacked["connections"] == []
    assert not Path(f"/usr/lib/hostile-{mark}").exists()
    assert mark not in Path(REPO, "grader", "grade.py").read_text()
    assert attacked["left"] == set()


def test_the_reference_and_the_grader_are_not_found_from_r(attacked):
    result = json.loads((attacked["out"] / "grades_results" / "read_reference.json").read_text())
    assert "FOUND:" in result["output"] and not re.search(r"FOUND: *\S", result["output"]), result["output"][:2000]


def test_an_output_flood_is_cut_and_said(attacked):
    result = json.loads((attacked["out"] / "grades_results" / "output_flood.json").read_text())
    assert "printed 2" in result["output"] and len(result["output"]) < 5000
