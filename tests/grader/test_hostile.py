"""Hostile submissions against a grader each test starts itself: no attack changes a grade, harms
another student, outlives grading or leaves anything behind.

Every attack acts only on what the test hands it: the grader it started (its parent, or the process
carrying this test's random mark in its environment), the folders of this test, and a listener on
127.0.0.1 that this test opened. The batch is one class of every attacker beside three correct students and the
starter file (no attack harms another student, an attacker included); each attack is also graded alone, as a
single file.
"""

import hashlib
import inspect
import json
import os
import re
import secrets
import socket
import subprocess
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import grader
from grader import template
from grader.functions.cases import all_cases
from grader.functions.contract import DEFAULT_SEED
from grader.sandbox import isolation

from .conftest import CORPORA, SUBMISSIONS, needs_system

HOSTILE = CORPORA / "hostile"
ATTACKS = sorted(p.stem for p in HOSTILE.glob("*.py"))
REPO = str(Path(grader.__file__).resolve().parent.parent)
CORRECT = {"ok_numpy": "correct_numpy.py", "ok_lists": "correct_lists.py", "ok_numpy_2": "correct_numpy.py"}
SECRET_SEED = 7_203_114
FLAGS = ["--timeout", "2", "--import-timeout", "6", "--lang", "en"]

pytestmark = needs_system(isolation.namespaces_problem(), "no namespaces here")


def reaches_a_screen(text: str) -> list[str]:
    """What in text a terminal or a page would act on: ESC, and the Unicode characters that show text in
    another order than written (judged by Unicode's own bidirectional classes, not the grader's list)."""
    reorders = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
    return [f"U+{ord(c):04X}" for c in text if c == "\x1b" or unicodedata.bidirectional(c) in reorders]


def expected_score(name: str) -> float:
    return float(re.search(r"expected (\d+)", (HOSTILE / f"{name}.py").read_text(), re.IGNORECASE).group(1))


class Stage:
    """The folders of one grading, its mark and its listener, with ``attacks`` beside three correct students and the
    starter file; the attackers' constants point at them."""

    def __init__(self, tmp: Path, *attacks: str):
        self.mark = "hostile-" + secrets.token_hex(8)
        self.submissions, self.out, self.tmpdir = tmp / "submissions", tmp / "out", tmp / "tmpdir"
        for d in (self.submissions, self.out, self.tmpdir):
            d.mkdir()
        self.listener = socket.create_server(("127.0.0.1", 0))
        constants = (f"MARK = {self.mark!r}\nREPO = {REPO!r}\nSUBMISSIONS = {str(self.submissions)!r}\n"
                     f"OUT = {str(self.out)!r}\nPORT = {self.listener.getsockname()[1]}\n")
        self.attackers = {attack: self.submissions / f"{attack}.py" for attack in attacks}
        for attack, path in self.attackers.items():
            path.write_text(constants + (HOSTILE / f"{attack}.py").read_text())
        for name, source in CORRECT.items():
            (self.submissions / f"{name}.py").write_text((SUBMISSIONS / source).read_text())
        (self.submissions / "starter.py").write_text(template.render("en"))
        self.before = self.fingerprint()

    @property
    def attacker(self) -> Path:
        """The attacker of a stage of one attack."""
        (path,) = self.attackers.values()
        return path

    def feedback(self, student: str) -> str:
        """What the batch told ``student``, for an assertion's message."""
        path = self.out / "grades_results" / f"{student}.json"
        if not path.exists():
            return f"no results JSON for {student}"
        result = json.loads(path.read_text())
        return "\n".join([result.get("output", "")] + [t.get("output", "") for t in result.get("tests", [])
                                                       if t.get("score") != t.get("max_score")])[:3000]

    def fingerprint(self) -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(self.submissions.iterdir())}

    def grade(self, run_grader, *target_args, timeout: float = 240) -> subprocess.CompletedProcess:
        env = {"GRADER_TEST_MARK": self.mark, "TMPDIR": str(self.tmpdir)}
        return run_grader(*target_args, *FLAGS, env=env, timeout=timeout)

    def connections(self) -> list[bytes]:
        """What reached the listener. Called once nothing of the grading is left (``leftovers``): a connection made
        on 127.0.0.1 is complete when connect() returns, so whatever came is already waiting to be accepted."""
        self.listener.setblocking(False)
        got = []
        try:
            while True:
                conn, _ = self.listener.accept()
                conn.settimeout(0.5)
                try:
                    got.append(conn.recv(100) or b"(connected, then closed)")
                except TimeoutError:
                    got.append(b"(connected, sent nothing)")
                conn.close()
        except BlockingIOError:
            return got
        finally:
            self.listener.close()

    def leftovers(self, seconds: float = 3.0) -> list[str]:
        """The command lines of the processes anywhere on this machine that carry this test's mark."""
        deadline = time.monotonic() + seconds
        while True:
            found = []
            for entry in os.listdir("/proc"):
                try:
                    cmdline = Path(f"/proc/{entry}/cmdline").read_bytes() if entry.isdigit() else b""
                except OSError:
                    continue
                if self.mark.encode() in cmdline:
                    found.append(cmdline.replace(b"\0", b" ").decode(errors="replace")[:200])
            if not found or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    def left_behind(self) -> list[str]:
        """What outlived this stage's grading: processes carrying its mark (their command lines), files in the
        grader's TMPDIR, a changed submission, a connection to the listener, a file planted outside."""
        found = [f"a process outlived grading: {cmdline!r}" for cmdline in self.leftovers()]
        found += [f"a file left in the grader's TMPDIR: {p.name}" for p in self.tmpdir.iterdir()]
        now = self.fingerprint()
        found += [f"the submissions folder changed: {name}" for name in sorted(now.keys() | self.before.keys())
                  if now.get(name) != self.before.get(name)]
        found += [f"reached a listener on 127.0.0.1: {got!r}" for got in self.connections()]
        found += [f"planted {path}" for path in (Path(f"/usr/lib/hostile-{self.mark}"),) if path.exists()]
        found += ["rewrote the grader's source"] if self.mark in Path(REPO, "grader", "grade.py").read_text() else []
        return found

    def assert_nothing_left(self, attack: str) -> None:
        assert self.left_behind() == [], attack


def results_of(stage: Stage) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((stage.out / "grades_results").glob("*"))}


@dataclass
class Graded:
    """A stage's grading, and what it left behind, looked at as soon as the grading ended."""
    stage: Stage
    proc: subprocess.CompletedProcess
    left: list[str]
    rewritten: list[str] = field(default_factory=list)  # results JSONs changed after the batch ended


@pytest.fixture(scope="module")
def hostile_class(run_grader, tmp_path_factory) -> Graded:
    """Every attack in one class, beside three correct students and the starter file, graded once by the batch
    command with two jobs: no attack may harm a neighbour, another attacker included."""
    stage = Stage(tmp_path_factory.mktemp("hostile_class"), *ATTACKS)
    proc = stage.grade(run_grader, stage.submissions, "--csv", stage.out / "grades.csv", "--jobs", 2,
                       "--seed", SECRET_SEED, timeout=600)
    written = results_of(stage)
    left = stage.left_behind()
    time.sleep(0.5)  # a daemon, had one survived without the mark, would have rewritten these by now
    now = results_of(stage)
    return Graded(stage, proc, left, sorted(name for name in now.keys() | written.keys()
                                           if now.get(name) != written.get(name)))


def gradebook(graded: Graded) -> pd.DataFrame:
    assert graded.proc.returncode == 0, graded.proc.stderr[-2000:]
    return pd.read_csv(graded.stage.out / "grades.csv", keep_default_na=False).set_index("student")


def test_in_a_class_of_attackers_every_honest_student_gets_full_marks_and_nothing_is_left(hostile_class):
    book, stage = gradebook(hostile_class), hostile_class.stage
    for name in CORRECT:
        assert book.loc[name, "total"] == 30, f"{name} lost points: {stage.feedback(name)}"
        assert book.loc[name, "error"] == ""
    assert book.loc["starter", "total"] == 0
    assert sorted(book.index) == sorted([*ATTACKS, *CORRECT, "starter"])
    assert hostile_class.left == []
    assert hostile_class.rewritten == []
    csv_text = (stage.out / "grades.csv").read_text()
    assert stage.mark not in csv_text
    assert reaches_a_screen(hostile_class.proc.stdout + hostile_class.proc.stderr + csv_text) == []
    assert reaches_a_screen(b"".join(results_of(stage).values()).decode()) == []  # the neighbours' results too


@pytest.mark.parametrize("attack", ATTACKS)
def test_in_a_batch_the_attack_gets_only_its_own_points(hostile_class, attack):
    book = gradebook(hostile_class)
    assert book.loc[attack, "total"] == expected_score(attack), hostile_class.stage.feedback(attack)
    assert book.loc[attack, "error"] == "", f"{attack} made the grader itself fail on it"
    results = (hostile_class.stage.out / "grades_results" / f"{attack}.json").read_text()
    assert reaches_a_screen(results) == []


@pytest.fixture(scope="module")
def graded_alone(run_grader, tmp_path_factory) -> dict[str, Graded]:
    """Each attack graded alone, as a single file, two at a time (as a batch's two jobs run); what each left
    behind looked at as soon as its own grading ended."""
    def alone(attack: str) -> Graded:
        stage = Stage(tmp_path_factory.mktemp(f"alone_{attack}"), attack)
        proc = stage.grade(run_grader, stage.attacker, "--json", stage.out / "results.json")
        return Graded(stage, proc, stage.left_behind())

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(ATTACKS, pool.map(alone, ATTACKS), strict=True))


@pytest.mark.parametrize("attack", ATTACKS)
def test_graded_alone_the_attack_gets_only_its_own_points(graded_alone, attack):
    graded = graded_alone[attack]
    assert graded.proc.returncode == 1, graded.proc.stderr[-2000:]
    results = json.loads((graded.stage.out / "results.json").read_text())
    assert results["score"] == expected_score(attack)
    assert reaches_a_screen(graded.proc.stdout + graded.proc.stderr + json.dumps(results, ensure_ascii=False)) == []
    assert graded.left == []


def _key(args):
    """A hash of a call's inputs, as the student's table computes it."""
    parts = []
    for a in args:
        for m in (a if isinstance(a, (list, tuple)) else [a]):
            parts.append(np.asarray(m, dtype=float).tobytes() + str(np.shape(m)).encode())
    return hashlib.sha256(b"|".join(parts)).hexdigest()


def test_a_lookup_table_built_on_the_public_seed_fails_on_a_secret_one(run_grader, tmp_path):
    """Answers keyed by a hash of the inputs, recorded by self-grading with the public default seed."""
    table = {}
    for case in all_cases(DEFAULT_SEED):
        table[f"{case.function}:{_key(case.args)}"] = case.reference_output().tolist()
    body = ["import hashlib", "import numpy as np", "inf = float('inf')", "",
            inspect.getsource(_key), f"TABLE = {table!r}", ""]
    for function, signature in template.SIGNATURES.items():
        args = [p.split("=")[0].strip() for p in signature.split(",") if not p.strip().startswith("causal")]
        body += [f"def {function}({signature}):", f"    return TABLE['{function}:' + _key([{', '.join(args)}])]", ""]
    student = tmp_path / "lookup.py"
    student.write_text("\n".join(body))
    public = run_grader(student, "--json", tmp_path / "public.json", "--lang", "en")
    secret = run_grader(student, "--json", tmp_path / "secret.json", "--lang", "en", "--seed", SECRET_SEED)
    public_score = json.loads((tmp_path / "public.json").read_text())["score"]
    secret_score = json.loads((tmp_path / "secret.json").read_text())["score"]
    assert public.returncode in (0, 1) and secret.returncode == 1
    assert public_score > secret_score
    hidden = [t for t in json.loads((tmp_path / "secret.json").read_text())["tests"] if "hidden" in t["name"]]
    # causal_mask's only argument is n, and every student's cases have the same sizes (equally hard for all):
    # its table is the right answer for those sizes, which is the function itself; every other one has values
    with_values = [t for t in hidden if not t["name"].startswith("causal_mask")]
    assert len(with_values) == len(hidden) - 1 and all(t["score"] == 0 for t in with_values)


def test_two_submissions_graded_at_once_cannot_reach_each_other(run_grader, tmp_path):
    """Two students graded side by side (--jobs 2) cooperate: one listens on an abstract Unix socket and on
    127.0.0.1 inside the sandbox, the other connects. Each submission must have a network of its own."""
    colluding = HOSTILE / "colluding"  # a pair, not one attacker: outside ATTACKS
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    submissions.mkdir()
    constants = f"MARK = {'collude-' + secrets.token_hex(8)!r}\nPORT = {41_000 + secrets.randbelow(20_000)}\n"
    for half in ("listener", "caller"):
        (submissions / f"{half}.py").write_text(constants + (colluding / f"{half}.py").read_text())
    proc = run_grader(submissions, "--csv", out / "grades.csv", "--jobs", 2, "--seed", SECRET_SEED, *FLAGS,
                      timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    said = {half: json.loads((out / "grades_results" / f"{half}.json").read_text()) for half in ("listener", "caller")}
    assert all(result["score"] == 0 for result in said.values())
    listener = re.search(r"LISTENER offered (\d) channels from ([\d.]+) to ([\d.]+)", json.dumps(said["listener"]))
    caller = re.search(r"CALLER reached (\[.*?\]) from ([\d.]+) to ([\d.]+)", json.dumps(said["caller"]))
    assert listener and caller, proc.stdout[-2000:]
    assert listener[1] == "2", "the listener could not open both channels, so the test proves nothing"
    overlap = min(float(listener[3]), float(caller[3])) - max(float(listener[2]), float(caller[2]))
    assert overlap > 1.0, f"the two were not graded at the same time (overlap {overlap:.2f} s)"
    assert caller[1] == "[]", f"a submission reached the one graded beside it: {caller[1]}"
