"""Class downloads as Moodle 3.x, Moodle 4.1+ and Canvas name them, the LMS identity of each row, and the
exports read back as each LMS's importer reads them (columns, identifiers, folder names, grade range)."""

import csv
import io
import re
import zipfile
from datetime import datetime

import pandas as pd
import pytest

from grader.intake import layouts
from grader.intake.finding import find
from grader.lms import download
from grader.lms.class_run import known_layouts
from grader.lms.moodle import COLUMNS as MOODLE_COLUMNS
from grader.lms.moodle import PARTICIPANT as MOODLE_PARTICIPANT

from ..corpora.lms_downloads import (
    CANVAS_CLASS,
    EXPECTED_TOTAL,
    MOODLE_CLASS,
    canvas_members,
    moodle_members,
    write_folder,
    write_zip,
)

SECRET = "ab" * 32
# `exported` grades two classes (each run limited to 600 s) in the first test's time: above the default.
pytestmark = pytest.mark.timeout(1200)


@pytest.mark.parametrize("version", ["3", "4.1"])
@pytest.mark.parametrize("in_folders", [True, False], ids=["folders", "files-at-top"])
def test_a_moodle_download_gives_one_row_per_student_with_name_and_participant_id(tmp_path, version, in_folders):
    found = find(write_folder(tmp_path, moodle_members(version, in_folders)))
    rows = {e.lms_id: e for e in found.entries}
    assert set(rows) == {pid for pid, _, _ in MOODLE_CLASS}  # online text never a row of its own
    for pid, name, _ in MOODLE_CLASS:
        assert (rows[pid].layout, rows[pid].display, rows[pid].identity) == ("moodle", name, f"moodle:{pid}")
    assert len(found.not_submissions) == len(MOODLE_CLASS)  # each online text listed, not graded
    assert rows["1874504"].open().__class__.__name__ == "Refusal"  # only online text: a row that says so


def test_a_canvas_download_with_unicode_names_groups_each_students_files_and_keeps_late(tmp_path):
    found = find(write_folder(tmp_path, canvas_members()))
    rows = {e.lms_id: e for e in found.entries}
    assert set(rows) == {uid for uid, *_ in CANVAS_CLASS}
    for uid, name, late, files in CANVAS_CLASS:
        assert (rows[uid].display, rows[uid].late, len(rows[uid].paths)) == (name, late, len(files))


def test_identity_depends_only_on_the_entry_itself(tmp_path):
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "alice.py").write_text("x = 1\n")
    (tmp_path / "crowd" / "alice").mkdir(parents=True)
    (tmp_path / "crowd" / "alice.py").write_text("x = 1\n")
    (tmp_path / "crowd" / "alice" / "a.py").write_text("x = 1\n")
    alone = find(tmp_path / "alone").entries[0]
    crowd = {e.label: e for e in find(tmp_path / "crowd").entries}
    assert crowd["alice.py"].student != alone.student  # the name shown is told apart from the neighbour's...
    assert crowd["alice.py"].identity == alone.identity == "alice"  # ...the cases are not


def test_names_that_look_alike_are_flagged_on_both_rows(tmp_path):
    for name in ("alice.py", "\u0430lice.py", "bob.py"):  # the second begins with a Cyrillic а
        (tmp_path / name).write_text("x = 1\n")
    rows = {e.display: e for e in find(tmp_path).entries}
    assert rows["alice"].lookalike == "\u0430lice"
    assert "mixed scripts" in rows["\u0430lice"].lookalike and "alice" in rows["\u0430lice"].lookalike
    assert rows["bob"].lookalike == ""


def test_another_lms_is_described_by_a_pattern_with_named_groups(tmp_path):
    (tmp_path / "Silva, Ana-20231234-late-atencao.py").write_text("x = 1\n")
    (tmp_path / "Silva, Ana-20231234-late-utils.py").write_text("x = 1\n")
    known = known_layouts((("sigaa", r"(?P<student>[^-]+)-(?P<id>\d+)-(?P<late>late-)?(?P<file>.+)"),))
    (entry,) = find(tmp_path, known).entries
    assert (entry.layout, entry.lms_id, entry.display, entry.late, len(entry.paths)) == (
        "sigaa", "20231234", "Silva, Ana", True, 2)
    with pytest.raises(ValueError, match="named groups"):
        layouts.layout("x", r"(?P<name>.+)_(?P<id>\d+)")


def test_a_downloaded_zip_without_the_utf8_flag_keeps_its_accents(tmp_path):
    zipped = write_zip(tmp_path / "download.zip", moodle_members("4.1"))
    assert not any("Conceição" in n for n in zipfile.ZipFile(zipped).namelist())  # what Python reads: cp437
    with download.opened(zipped) as folder:
        names = {e.display for e in find(folder).entries}
    assert names == {name for _, name, _ in MOODLE_CLASS}


# --- the whole path: the zip as downloaded, graded, and every export read back as the LMS reads it ---


def _moodle_import(path, lang, out_of):
    """assignfeedback_offline's importer: columns by name, the id after "Participant ", the modified time parsed."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    header = rows[0]
    grade, ident, modified = (header.index(MOODLE_COLUMNS[lang][i]) for i in (4, 0, 8))
    comments = header.index(MOODLE_COLUMNS[lang][9])
    grades = {}
    for row in rows[1:]:
        assert row[ident].startswith(MOODLE_PARTICIPANT[lang])
        datetime.strptime(row[modified], "%Y-%m-%d %H:%M:%S UTC")
        value = float(row[grade])
        assert 0 <= value <= out_of  # Moodle skips a grade above the maximum
        grades[row[ident][len(MOODLE_PARTICIPANT[lang]):]] = (value, row[comments])
    return grades


def _moodle_feedback_import(path, participants):
    """assignfeedback_file's importer: each path part split on "_" (five parts at most); the participant id second,
    the plugin third and fourth."""
    found = {}
    for name in zipfile.ZipFile(path).namelist():
        for part in name.split("/"):
            info = part.split("_", 4)
            if len(info) >= 4 and info[1].isdigit() and info[1] in participants:
                assert (info[2], info[3]) == ("assignsubmission", "file")
                found[info[1]] = zipfile.ZipFile(path).read(name).decode()
                break
    return found


def _canvas_import(path, assignment_id, out_of):
    book = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert list(book.columns[:5]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    (column,) = [c for c in book.columns if re.fullmatch(rf".+ \({assignment_id}\)", c)]
    scores = {row["ID"]: float(row[column]) for _, row in book.iterrows()}
    assert all(0 <= s <= out_of for s in scores.values())
    return scores


@pytest.fixture(scope="module")
def exported(run_grader, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lms")
    secret = tmp / "secret.txt"
    secret.write_text(SECRET)
    moodle = write_zip(tmp / "moodle.zip", moodle_members("4.1"))
    canvas = write_zip(tmp / "canvas.zip", canvas_members())
    proc_m = run_grader(moodle, "--csv", tmp / "moodle.csv", "--secret-file", secret, "--lang", "pt", "--jobs", 2,
                        "--out-of", 10, "--moodle-worksheet", tmp / "worksheet.csv", "--moodle-feedback",
                        tmp / "feedback.zip", "--feedback-dir", tmp / "pages", timeout=600)
    proc_c = run_grader(canvas, "--csv", tmp / "canvas.csv", "--secret-file", secret, "--lang", "en", "--jobs", 2,
                        "--out-of", 10, "--canvas-gradebook", tmp / "canvas_import.csv", "--canvas-assignment",
                        "Atenção mascarada (123456)", timeout=600)
    assert proc_m.returncode == 0, proc_m.stderr[-3000:]
    assert proc_c.returncode == 0, proc_c.stderr[-3000:]
    return tmp, proc_m, proc_c


def _expected(pid: str, got: float) -> None:
    want = EXPECTED_TOTAL[pid]
    if want is None:
        assert 0 < got < 10, pid
    else:
        assert got == want / 3, pid  # out of 10


def test_moodle_worksheet_and_feedback_zip_reach_every_student_with_the_grade_out_of_10(exported):
    tmp, proc, _ = exported
    grades = _moodle_import(tmp / "worksheet.csv", "pt", 10)
    assert set(grades) == {pid for pid, _, _ in MOODLE_CLASS}
    for pid, (grade, comment) in grades.items():
        _expected(pid, grade)
        assert comment.startswith("Total:")
    pages = _moodle_feedback_import(tmp / "feedback.zip", set(grades))
    assert set(pages) == set(grades)
    assert "missing-scale" in pages["1874503"] and "Devolutiva" in pages["1874503"]
    assert "<script" not in "".join(pages.values())
    assert len(list((tmp / "pages").glob("*.html"))) == len(MOODLE_CLASS)
    book = pd.read_csv(tmp / "moodle.csv", dtype=str, keep_default_na=False)
    assert set(book["lms"]) == {"moodle"} and set(book["lms_id"]) == set(grades)


def test_canvas_gradebook_reaches_every_student_with_the_grade_and_late_flag(exported):
    tmp, _, _ = exported
    scores = _canvas_import(tmp / "canvas_import.csv", "123456", 10)
    assert set(scores) == {uid for uid, *_ in CANVAS_CLASS}
    for uid, score in scores.items():
        _expected(uid, score)
    book = pd.read_csv(tmp / "canvas.csv", dtype=str, keep_default_na=False).set_index("lms_id")
    assert book.loc["9100111", "late"] == "True" and book.loc["9100112", "late"] == "False"


def test_a_class_download_without_csv_is_refused_in_one_line_not_graded_as_one_student(run_grader, tmp_path):
    zipped = write_zip(tmp_path / "download.zip", canvas_members())
    proc = run_grader(zipped, "--lang", "en")
    assert proc.returncode == 2 and "is a class download (3 students named as canvas" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
