"""The intake, as an examiner meets it: every shape of hand-in gets its row, alone, in a batch and on Gradescope.

The corpus (``intake_corpus.py``) is built at run time into a batch folder: notebooks, Colab and nbconvert
exports, each encoding, Moodle and Canvas layouts, zips, nested folders, helper modules, links, a FIFO, an
oversized file and hostile names. Each shape names the row it must get.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
import zipfile

import pandas as pd
import pytest

from grader.intake import Caps, HandIn, Refusal, open_path
from grader.intake.names import file_stem

from ..conftest import SUBMISSIONS
from .intake_corpus import CORRECT, NOT_SUBMISSIONS, REFERENCE, SHAPES, build

IMPORT_TIMEOUT = "6"  # a top-level statement gets half: 3 s before it is skipped
BIDI = {"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI", "LRM", "RLM", "ALM"}


def _safe(text: str) -> bool:
    """No control character but newline and tab, no bidi mark: nothing a terminal or a page would act on."""
    return not any((unicodedata.category(c) == "Cc" and c not in "\n\t") or unicodedata.bidirectional(c) in BIDI
                   for c in text)


@pytest.fixture(scope="module")
def corpus_batch(run_grader, tmp_path_factory):
    """The whole corpus graded once as one batch folder, by the command line, two at a time."""
    tmp = tmp_path_factory.mktemp("intake")
    build(tmp / "class")
    csv = tmp / "grades.csv"
    proc = run_grader(tmp / "class", "--csv", csv, "--jobs", 2, "--seed", 7, "--import-timeout", IMPORT_TIMEOUT,
                      "--lang", "en", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    raw = csv.read_bytes()
    book = pd.read_csv(csv, keep_default_na=False, encoding="utf-8").set_index("student")
    results = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (tmp / "grades_results").glob("*.json")}
    return proc, raw, book, results


def _stems(students: list[str]) -> dict[str, str]:
    taken, stems = set(), {}
    for student in sorted(students, key=lambda s: (s.lower(), s)):
        stems[student] = file_stem(student, taken)
    return stems


def _feedback(result: dict) -> str:
    return result["output"] + "\n".join(t["output"] for t in result["tests"])


def test_every_shape_gets_its_row_in_one_batch(corpus_batch):
    proc, raw, book, results = corpus_batch
    assert sorted(book.index) == sorted(s.student for s in SHAPES)  # one row each: nothing lost, nothing merged
    stems = _stems(list(book.index))
    for shape in SHAPES:
        row = book.loc[shape.student]
        assert (row["status"], row["total"]) == (shape.status, shape.total), (shape.student, row["reason"])
        assert bool(row["late"]) == shape.late, shape.student
        if shape.status == "graded":
            assert row["reason"] == ""
            assert shape.phrase in _feedback(results[stems[shape.student]]), shape.student
        else:
            assert shape.phrase in row["reason"], (shape.student, row["reason"])
            assert shape.phrase in results[stems[shape.student]]["output"]
    for name in NOT_SUBMISSIONS:
        assert name in proc.stdout.split("left out of the gradebook:", 1)[1]


def test_every_name_is_written_safely_to_the_gradebook_the_results_and_the_terminal(corpus_batch):
    proc, raw, book, results = corpus_batch
    text = raw.decode("utf-8")  # the whole file is UTF-8, whatever bytes the names had
    assert _safe(text.replace("\r\n", "\n")) and _safe(proc.stdout)
    assert "\x1b" not in proc.stdout and "<img" not in text
    assert all(_safe(json.dumps(r, ensure_ascii=False)) and len(stem.encode()) <= 120 for stem, r in results.items())
    assert all(_safe(stem) and "/" not in stem for stem in results)


def test_the_summary_names_every_student_not_graded_with_the_reason(corpus_batch):
    proc, *_ = corpus_batch
    for shape in SHAPES:
        if shape.status != "graded":
            line = next(line for line in proc.stdout.splitlines() if line.startswith(f"{shape.student} gets 0"))
            assert shape.phrase in line


ALONE = [s for s in SHAPES if s.correct and isinstance(s.entry, str) and "_" not in s.entry]


@pytest.mark.parametrize("shape", ALONE, ids=[s.student[:20] for s in ALONE])
def test_each_correct_shape_gets_full_marks_alone_and_through_the_gradescope_entry_point(run_grader, tmp_path, shape):
    build(tmp_path / "class")
    entry = tmp_path / "class" / shape.entry
    submission = tmp_path / "submission"
    if entry.is_dir():
        shutil.copytree(entry, submission)
    else:
        submission.mkdir()
        shutil.copy(entry, submission / entry.name)
        alone = run_grader(entry, "--lang", "pt", "--json", tmp_path / "alone.json", "--import-timeout", IMPORT_TIMEOUT)
        assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr[-2000:]
        assert "Total: 30 / 30" in alone.stdout
        assert shape.phrase_pt in _feedback(json.loads((tmp_path / "alone.json").read_text()))
    # What run_autograder runs on Gradescope, over a submission folder holding this hand-in alone.
    gradescope = run_grader("gradescope", submission, tmp_path / "results.json", "--lang", "pt",
                            "--import-timeout", IMPORT_TIMEOUT)
    assert gradescope.returncode == 0, gradescope.stderr[-2000:]
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["score"] == 30, result["output"]


@pytest.mark.parametrize("shape", [s for s in SHAPES if s.status == "refused"], ids=lambda s: s.student)
def test_every_refusal_says_why_and_what_to_do_in_portuguese_too(tmp_path, shape):
    build(tmp_path / "class")
    refusal = open_path(tmp_path / "class" / shape.entry)
    assert shape.phrase in refusal.message.text("en") and shape.phrase_pt in refusal.message.text("pt")


def test_a_folder_with_a_fifo_a_link_to_dev_zero_a_link_to_the_reference_and_an_odd_byte_finishes_whole(run_grader,
                                                                                                         tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("ana", "bruno", "carla"):
        (folder / f"{name}.py").write_text(CORRECT)
    os.mkfifo(folder / "fifo.py")
    os.symlink("/dev/zero", folder / "zeros.py")
    os.symlink(REFERENCE, folder / "gabarito.py")
    odd = folder / os.fsdecode(b"ren\xe9")
    odd.mkdir()
    os.symlink(REFERENCE, odd / "student.py")
    csv = tmp_path / "grades.csv"
    proc = run_grader(folder, "--csv", csv, "--jobs", 2, "--seed", 3, "--lang", "pt", timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    book = pd.read_csv(csv, keep_default_na=False).set_index("student")
    assert sorted(book.index) == ["ana", "bruno", "carla", "fifo", "gabarito", "ren\ufffd", "zeros"]
    for name in ("ana", "bruno", "carla"):
        assert (book.loc[name, "total"], book.loc[name, "status"]) == (30, "graded")
    for name in ("fifo", "gabarito", "ren\ufffd", "zeros"):
        assert (book.loc[name, "total"], book.loc[name, "status"]) == (0, "refused")
        assert "entregue" in book.loc[name, "reason"]  # what to do, in the instructor's language


CP1252 = {**os.environ, "PYTHONIOENCODING": "cp1252"}


def test_on_a_cp1252_console_the_template_and_redirected_grading_work(run_grader, tmp_path):
    template = subprocess.run([sys.executable, "-m", "grader", "--template", "--lang", "pt"], capture_output=True,
                              env=CP1252, timeout=60)
    assert template.returncode == 0 and b"Traceback" not in template.stderr
    student = tmp_path / "student.py"
    student.write_bytes(template.stdout)  # what `> student.py` leaves: cp1252 bytes
    proc = subprocess.run([sys.executable, "-m", "grader", str(student), "--lang", "pt", "--json",
                           str(tmp_path / "r.json")], capture_output=True, env=CP1252, timeout=120)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr  # the template's functions are not written yet
    assert "ainda não foi implementada" in json.loads((tmp_path / "r.json").read_text())["tests"][0]["output"]
    mistake = subprocess.run([sys.executable, "-m", "grader", str(SUBMISSIONS / "mistake_missing_scale.py"),
                              "--json", str(tmp_path / "m.json"), "--lang", "en"], capture_output=True, env=CP1252,
                             timeout=120)
    assert mistake.returncode == 1 and b"Traceback" not in mistake.stderr
    assert "√d_k" in (tmp_path / "m.json").read_text(encoding="utf-8")  # the file keeps what the console cannot show
    out = tmp_path / "template.py"
    assert run_grader("--template", "--lang", "pt", "--out", out, env={"PYTHONIOENCODING": "cp1252"}).returncode == 0
    assert "Questão 1" in out.read_text(encoding="utf-8")


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
@pytest.mark.parametrize("mode", ["trusted", "auto"])
def test_the_grader_grades_a_file_where_the_resource_module_does_not_exist(mode):
    hide = ("import sys; sys.modules['resource'] = None; from grader.cli import main; "
            f"sys.exit(main([{str(SUBMISSIONS / 'correct_numpy.py')!r}, '--isolation', {mode!r}, '--lang', 'en']))")
    proc = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Total: 30 / 30" in proc.stdout


GRADED = "def causal_mask(n):\n    return n\n\ndef softmax(x):\n    return x\n"


def test_a_file_that_cannot_be_read_is_passed_over_and_named(tmp_path):
    folder = tmp_path / "ana"
    folder.mkdir()
    (folder / "student.py").write_text(GRADED)
    os.symlink("/etc/passwd", folder / "link.py")
    handin = open_path(folder)
    assert isinstance(handin, HandIn) and handin.name == "student.py"
    assert [n.values for n in handin.notes if n.key == "intake.ignored"] == [{"names": "link.py"}]


def test_past_the_students_file_total_the_whole_hand_in_is_refused_not_one_file(tmp_path):
    folder = tmp_path / "ana"
    folder.mkdir()
    for name in ("a.py", "b.py", "student.py"):
        (folder / name).write_text(GRADED)
    refusal = open_path(folder, Caps(student_files=2))
    assert isinstance(refusal, Refusal)
    assert (refusal.message.key, refusal.message.values) == ("intake.total_files", {"limit": 2})


def test_past_the_students_byte_total_inside_a_zip_the_whole_hand_in_is_refused(tmp_path):
    path = tmp_path / "ana.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("student.py", GRADED + "#" * 4096 + "\n")
    refusal = open_path(path, Caps(student_bytes=3000))
    assert isinstance(refusal, Refusal) and refusal.message.key == "intake.total_bytes"


def _with_helper(tmp_path):
    """A student's folder: the graded file, and the helper module it imports."""
    folder = tmp_path / "ana"
    folder.mkdir()
    (folder / "student.py").write_text("import utils\n" + GRADED)
    (folder / "utils.py").write_text("X = 1\n")
    return folder


def test_past_the_total_while_reading_a_helper_the_whole_hand_in_is_refused(tmp_path):
    folder = _with_helper(tmp_path)
    # Each is read once to choose the graded file, the helper once more when it is imported: three files.
    assert isinstance(open_path(folder, Caps(student_files=3)), HandIn)
    refusal = open_path(folder, Caps(student_files=2))
    assert isinstance(refusal, Refusal) and refusal.message.key == "intake.total_files"


def test_the_other_files_are_named_but_the_helpers_the_graded_file_imports(tmp_path):
    folder = _with_helper(tmp_path)
    (folder / "draft.py").write_text("def causal_mask(n):\n    return n\n")
    handin = open_path(folder)
    assert handin.name == "student.py" and [m for m, _ in handin.helpers] == ["utils"]
    chosen = [n.values for n in handin.notes if n.key == "intake.chosen"]
    assert chosen == [{"name": "student.py", "others": "draft.py"}]


def test_code_past_the_graded_code_cap_is_refused_with_its_size(tmp_path):
    path = tmp_path / "ana.py"
    path.write_text(GRADED + "#" * 3000 + "\n")
    refusal = open_path(path, Caps(code_bytes=1024))
    assert isinstance(refusal, Refusal) and refusal.message.key == "intake.code_too_big"
    assert refusal.message.values["name"] == "ana.py"


def test_a_file_with_only_comments_is_refused_as_empty(tmp_path):
    path = tmp_path / "ana.py"
    path.write_text("# nothing yet\n\n")
    refusal = open_path(path)
    assert isinstance(refusal, Refusal) and refusal.message.key == "intake.empty"
