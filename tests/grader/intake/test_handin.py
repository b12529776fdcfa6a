"""The intake's choice of a student's graded file (grader/intake/handin.py): what is passed over, what refuses the
whole hand-in, and what the student is told of the choice."""

import os
import zipfile

from grader.intake import Caps, HandIn, Refusal, open_path

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
