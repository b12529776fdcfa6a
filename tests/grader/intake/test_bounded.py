"""The intake bounded: hostile data refused with a reason, never a crash, a lost gradebook or a grader
past its memory; a results file whatever fails; helpers only from the student's own hand-in.

Each attack (``intake_attacks.py``) is small on disk and under every cap. It is read alone by the intake's helper
process, graded in a batch beside correct students (who keep full marks, within the stated bound, with the grader's
own peak memory under 512 MiB) and through the Gradescope entry point.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from grader.intake import HandIn, Refusal, bounded

from .intake_attacks import ATTACKS, DRAFT, build, notebook
from .intake_corpus import CORRECT

MIB = 1024**2
BUDGET = 30  # seconds per submission in the batch below
PEAK_MIB = 512  # the grader's own process, on any hand-in under the caps


@pytest.fixture(scope="module")
def attacks(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("attacks") / "class"
    build(folder)
    return folder


REFUSED = [a for a in ATTACKS if a.status == "refused"]


@pytest.mark.parametrize("attack", REFUSED, ids=[a.entry for a in REFUSED])
def test_each_attack_on_the_intake_is_refused_with_its_reason_in_both_languages(attacks, attack):
    result = bounded.read(attacks / attack.entry)
    assert isinstance(result, Refusal), result
    assert attack.said(result.message.text("en")) and attack.said(result.message.text("pt"), "pt")
    assert 0 < result.seconds < 20


def test_a_notebooks_cells_are_read_whatever_form_nbformat_allows_for_their_source(tmp_path):
    for joined in (True, False):
        folder = tmp_path / f"joined_{joined}"
        folder.mkdir()
        (folder / "caderno.ipynb").write_text(notebook([CORRECT], joined=joined))
        (folder / "draft.py").write_text(DRAFT)
        handin = bounded.read(folder)
        assert isinstance(handin, HandIn) and handin.name == "caderno.ipynb", handin
        assert handin.cells[0].source.startswith(CORRECT.splitlines()[0])


def test_a_lone_file_takes_no_neighbour_as_a_helper_unless_named(run_grader, tmp_path):
    (tmp_path / "alice.py").write_text(CORRECT)
    mallory = tmp_path / "mallory.py"
    mallory.write_text("from alice import *  # noqa\n")
    alone = run_grader(mallory, "--lang", "en", "--json", tmp_path / "alone.json")
    assert alone.returncode == 1 and "Total: 0 / 30" in alone.stdout, alone.stdout[-2000:]
    assert "alice" in json.loads((tmp_path / "alone.json").read_text())["output"]
    named = run_grader(mallory, "--helper", tmp_path / "alice.py", "--lang", "en")
    assert named.returncode == 0 and "Total: 30 / 30" in named.stdout, named.stdout[-2000:]


def test_a_batch_of_every_attack_keeps_its_correct_students_their_marks_within_the_bound(measured_grader, attacks,
                                                                                        tmp_path):
    for name in ("ana", "bruno", "carla"):
        (attacks / f"{name}.py").write_text(CORRECT)
    csv = tmp_path / "grades.csv"
    start = time.monotonic()
    proc, peak = measured_grader(attacks, "--csv", csv, "--jobs", 2, "--seed", 5, "--budget", BUDGET, "--lang", "pt")
    seconds = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    book = pd.read_csv(csv, keep_default_na=False).set_index("student")
    for name in ("ana", "bruno", "carla"):
        assert (book.loc[name, "total"], book.loc[name, "status"]) == (30, "graded"), book.loc[name, "reason"]
    for attack in ATTACKS:
        row = book.loc[Path(attack.entry).stem]
        assert (row["status"], row["total"]) == (attack.status, attack.total), (attack.entry, row["reason"])
        if attack.status == "refused":
            assert attack.said(row["reason"], "pt"), (attack.entry, row["reason"])
    # docs/instructors.md: ceil(N / J) x B, plus a regrade alone for each student graded again, plus the start.
    again = proc.stdout.count(", ") if "de novo" in proc.stdout else 0
    assert seconds < (math.ceil(len(book) / 2) + again) * BUDGET + 30, seconds
    assert peak < PEAK_MIB, f"the grader's own peak was {peak:.0f} MiB"


@pytest.mark.parametrize("entry", ["punycode.py", "deflate_broken.zip", "empty_objects.ipynb", "many_bangs.py"])
def test_an_attack_alone_and_through_the_gradescope_entry_point_gets_a_results_file(measured_grader, run_grader,
                                                                                    attacks, tmp_path, entry):
    attack = next(a for a in ATTACKS if a.entry == entry)
    proc, peak = measured_grader(attacks / entry, "--json", tmp_path / "alone.json", "--lang", "pt")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    alone = json.loads((tmp_path / "alone.json").read_text())
    assert alone["score"] == 0 and attack.said(alone["output"], "pt")
    assert peak < PEAK_MIB, f"the grader's own peak was {peak:.0f} MiB"
    submission = tmp_path / "submission"
    submission.mkdir()
    os.link(attacks / entry, submission / entry)
    gradescope = run_grader("gradescope", submission, tmp_path / "results.json", "--lang", "en", "--seed", 3)
    assert gradescope.returncode == 0 and "Traceback" not in gradescope.stderr, gradescope.stderr[-2000:]
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["score"] == 0 and attack.said(result["output"])


# A failure injected into each stage between reading and judging: the stage's function replaced by one that raises,
# in the grader's own process, which then runs its real command line.
STAGES = {
    "reading": "grader.intake.bounded:read",
    "sandbox start": "grader.sandbox.session:Sandbox.start",
    "judging": "grader.functions.run:diagnose",
    "wording": "grader.results:TestVerdict.word",
}
INJECT = """import importlib, sys
module, _, attribute = sys.argv[1].partition(":")
owner = importlib.import_module(module)
*path, name = attribute.split(".")
for part in path:
    owner = getattr(owner, part)
def broken(*args, **kwargs):
    raise RuntimeError("injected failure")
setattr(owner, name, broken)
from grader.cli import main
sys.exit(main(sys.argv[2:]))
"""


def injected(stage: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", INJECT, STAGES[stage], *map(str, args)], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@pytest.mark.parametrize("stage", STAGES)
def test_a_failure_at_any_stage_still_writes_the_students_results_alone_on_gradescope_and_in_a_batch(tmp_path, stage):
    student = tmp_path / "class" / "ana.py"
    student.parent.mkdir()
    student.write_text(CORRECT)
    alone = injected(stage, student, "--json", tmp_path / "alone.json", "--lang", "pt")
    assert alone.returncode == 1 and "Traceback" not in alone.stderr, alone.stderr[-2000:]
    result = json.loads((tmp_path / "alone.json").read_text())
    assert result["score"] == 0 and "injected failure" in result["output"]
    assert "O corretor" in result["output"]
    gradescope = injected(stage, "gradescope", student.parent, tmp_path / "results.json", "--seed", 3, "--lang", "en")
    assert gradescope.returncode == 0, gradescope.stderr[-2000:]
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["score"] == 0 and "injected failure" in result["output"]
    batch = injected(stage, student.parent, "--csv", tmp_path / "grades.csv", "--seed", 3, "--lang", "en")
    assert batch.returncode == 0, batch.stderr[-2000:]
    row = pd.read_csv(tmp_path / "grades.csv", keep_default_na=False).set_index("student").loc["ana"]
    assert row["total"] == 0 and "injected failure" in row["reason"], row.to_dict()
    assert json.loads((tmp_path / "grades_results" / "ana.json").read_text())["score"] == 0


def test_the_gradescope_script_writes_a_results_file_where_the_grader_cannot_even_start(tmp_path):
    from grader.bundle import SCRIPTS

    script = tmp_path / "run_autograder"
    shutil.copy(SCRIPTS / "run_autograder", script)
    (tmp_path / "submission").mkdir()
    env = {**os.environ, "GRADER_AUTOGRADER_ROOT": str(tmp_path), "GRADER_PYTHON": "/nonexistent/python3"}
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode != 0
    result = json.loads((tmp_path / "results" / "results.json").read_text())
    assert result["score"] == 0
    assert "avise o professor" in result["output"] and "tell your instructor" in result["output"]
