"""Round 4's attacks on what the grader writes for the instructor, written afresh: a Moodle class whose names are
spreadsheet formulas, twins that differ only in Unicode normalisation, look-alikes in Cyrillic, Greek and
full-width letters, a student whose folder starts with a dot, and the macOS and git leftovers beside them. One
batch run, as an instructor runs it (the command line, the class folder, every export and the class page):
every student a row with their own grade and files, every cell of every CSV inert, every entry accounted for.

Single files and Gradescope's installed bundle grade one hand-in and name no file after a student nor write a
CSV, so these cases are the batch's alone.
"""

import csv
import html
import io
import re
import unicodedata
import zipfile

import pytest

from grader.classpage import gradebook
from grader.lms.moodle import PARTICIPANT as MOODLE_PARTICIPANT

from .corpora.lms_downloads import CORRECT, write_folder

FORMULAS = ["=alice", "+SUM(1;2)", "-2+3", "@SUM(A1)", '=HYPERLINK("x.test?q="+A1;"nota")', "\uff1dSUM(1)"]
TWINS = ["José Nfc", "Jose\u0301 Nfc"]  # composed and decomposed: one file name on macOS or an SMB share
ALICES = ["alice", "\u0430lice", "\u03b1lice", "\uff41\uff4c\uff49\uff43\uff45"]  # Latin, Cyrillic, Greek, full-width
DOT = ".Ana Dot"
STUDENTS = {f"18746{i:02d}": name for i, name in enumerate([*FORMULAS, *TWINS, *ALICES, DOT])}
LEFTOVERS = {".DS_Store": "\x00\x01Bud1", ".git/HEAD": "ref: refs/heads/main\n", "leia-me.txt": "entregas\n"}
RUNS = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")  # a spreadsheet runs these
pytestmark = pytest.mark.timeout(900)


def name_key(name: str) -> str:
    """What a file system that normalises names and ignores case (macOS, SMB) compares."""
    return unicodedata.normalize("NFC", name).casefold()


@pytest.fixture(scope="module")
def graded(run_grader, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("round4")
    members = {f"{name}_{pid}_assignsubmission_file_/atencao.py": CORRECT for pid, name in STUDENTS.items()}
    folder = write_folder(tmp / "download", {**members, **LEFTOVERS})
    proc = run_grader(folder, "--csv", tmp / "grades.csv", "--seed", 7, "--lang", "en", "--jobs", 2,
                      "--out-of", 10, "--moodle-worksheet", tmp / "worksheet.csv", "--moodle-feedback",
                      tmp / "feedback.zip", "--feedback-dir", tmp / "pages", "--class-page", tmp / "class.html",
                      timeout=800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp, proc.stdout


def _cells(path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))


def test_every_student_gets_their_own_row_and_grade_and_no_entry_is_dropped(graded):
    tmp, stdout = graded
    students = gradebook.read(tmp / "grades.csv", tmp / "grades_results")
    assert len(students) == len(STUDENTS)  # the dot folder too: a row each, nothing merged
    assert all(s.total == s.max_total == 30 for s in students), [(s.name, s.reason) for s in students]
    assert all(len(s.tests) > 0 for s in students)  # each read back its own results JSON
    assert f"Graded {len(STUDENTS)} submissions" in stdout
    dotted = next(line for line in stdout.splitlines() if "starts with a dot" in line)
    assert ".DS_Store" in dotted and ".git" in dotted and DOT not in dotted
    assert any("leia-me.txt" in line for line in stdout.splitlines() if line.startswith("Not a submission"))


def test_no_cell_of_the_gradebook_or_the_worksheet_starts_a_formula(graded):
    tmp, _ = graded
    for name in ("grades.csv", "worksheet.csv"):
        rows = _cells(tmp / name)
        assert not [c for row in rows for c in row if c.startswith(RUNS)], name
    names = {s.name for s in gradebook.read(tmp / "grades.csv", None)}
    assert set(FORMULAS) <= names  # read back exactly as the LMS spelled them
    worksheet = _cells(tmp / "worksheet.csv")
    assert {row[0] for row in worksheet[1:]} == {MOODLE_PARTICIPANT["en"] + pid for pid in STUDENTS}


def test_twins_in_unicode_normalisation_get_files_of_their_own_and_are_flagged(graded):
    tmp, _ = graded
    for folder, suffix in (("grades_results", ".json"), ("pages", ".html")):
        stems = [p.name[: -len(suffix)] for p in (tmp / folder).iterdir()]
        assert len(stems) == len(STUDENTS) == len({name_key(s) for s in stems}), folder
    moodle = zipfile.ZipFile(tmp / "feedback.zip").namelist()
    assert len({name_key(n) for n in moodle}) == len(STUDENTS)
    book = {s.name: s for s in gradebook.read(tmp / "grades.csv", None)}
    twins = [s for s in book.values() if name_key(s.name).startswith(name_key(TWINS[0]))]
    assert len(twins) == 2 and all(t.lookalike for t in twins)


def test_look_alikes_are_flagged_in_the_summary_the_gradebook_and_the_class_page(graded):
    tmp, stdout = graded
    book = {s.name: s for s in gradebook.read(tmp / "grades.csv", None)}
    page = html.unescape((tmp / "class.html").read_text(encoding="utf-8"))
    attention = re.search(r'<table id="attention-table">(.*?)</table>', page, re.S).group(1)
    for name in ALICES:
        others = [o for o in ALICES if o != name]
        assert all(o in book[name].lookalike for o in others), (name, book[name].lookalike)
        assert any(line.startswith(f"Look-alike name: {name} reads like") for line in stdout.splitlines())
        row = re.search(rf'<tr data-student="{re.escape(name)}">(.*?)</tr>', attention, re.S).group(1)
        assert "look-alike name" in row and all(o in row for o in others)
    assert not any(name in book and book[name].lookalike for name in FORMULAS)
