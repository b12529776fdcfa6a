"""No entry of a download is dropped without a trace (round 4): every entry at the top of a class folder is a
student's row or listed in the summary as not a submission, with why, in every layout; a Moodle folder whose
name starts with a dot is a student."""

import os

import pytest

from grader.batch import summary
from grader.intake.finding import Why, find
from grader.intake.handin import SUFFIXES

from ..corpora.lms_downloads import CORRECT, canvas_members, moodle_members, write_folder

DOT_STUDENT = (".Ana Dot", "1874600")
EXTRAS = {".DS_Store": "\x00\x01", ".git/HEAD": "ref: refs/heads/main\n", "notes.txt": "lembrete\n",
          "._atencao.py": "\x00\x05\x16\x07", ".hidden.py": CORRECT}


def _moodle(version: str, in_folders: bool) -> dict[str, str]:
    members = moodle_members(version, in_folders)
    name, pid = DOT_STUDENT
    if in_folders:
        members[f"{name}_{pid}_assignsubmission_file{'_' if version == '3' else ''}/atencao.py"] = CORRECT
    return members


LAYOUTS = {
    "moodle-3-folders": lambda: _moodle("3", True),
    "moodle-4.1-folders": lambda: _moodle("4.1", True),
    "moodle-files-at-top": lambda: _moodle("4.1", False),
    "canvas": canvas_members,
    "plain": lambda: {"ana.py": CORRECT, "bruno/atencao.py": CORRECT, "carla.zip": "not a zip"},
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_entry_is_a_row_or_a_listed_skip_with_why(tmp_path, layout):
    folder = write_folder(tmp_path / "class", {**LAYOUTS[layout](), **EXTRAS})
    found = find(folder)
    entries = set(os.listdir(folder))
    in_rows = [p.name for e in found.entries for p in e.paths]
    skipped = {s.name: s.why for s in found.not_submissions}
    assert len(in_rows) == len(set(in_rows))  # no entry in two rows
    assert set(in_rows) | set(skipped) == entries  # and none left out without a word
    # only a student who typed online text alone is both: the row says so, the summary lists the text
    assert all(skipped[name] is Why.OTHER_KIND for name in set(in_rows) & set(skipped))
    assert {skipped[n] for n in (".DS_Store", ".git", "._atencao.py", ".hidden.py")} == {Why.HIDDEN}
    assert skipped["notes.txt"] is Why.NOT_A_HANDIN
    said = {lang: summary([], 30.0, 1.0, lang, [], found.not_submissions) for lang in ("en", "pt")}
    lines = [line for line in said["en"].splitlines() if line.startswith("Not a submission")]
    assert all(any(name in line for line in lines) for name in skipped)
    assert any("starts with a dot" in line and ".DS_Store" in line for line in lines)
    assert any(", ".join(SUFFIXES) in line and "notes.txt" in line for line in lines)
    assert sum(line.startswith("Não é uma submissão") for line in said["pt"].splitlines()) == len(lines)


@pytest.mark.parametrize("version", ["3", "4.1"])
def test_a_moodle_folder_whose_name_starts_with_a_dot_is_a_student(tmp_path, version):
    found = find(write_folder(tmp_path / "class", _moodle(version, True)))
    (dot,) = [e for e in found.entries if e.lms_id == DOT_STUDENT[1]]
    assert (dot.display, dot.layout, dot.identity) == (DOT_STUDENT[0], "moodle", f"moodle:{DOT_STUDENT[1]}")
    folder = f"{DOT_STUDENT[0]}_{DOT_STUDENT[1]}_assignsubmission_file{'_' if version == '3' else ''}"
    assert [p.name for p in dot.paths] == [folder]
