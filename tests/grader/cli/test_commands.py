"""The command line as commands: each takes only its own options, an option of another command is refused by
name (in the language asked for) before anything runs, and ``python -m grader FILE``/``FOLDER`` still choose the
command themselves. Every refusal here happens before a sandbox starts: the tests call ``cli.main`` in-process."""

import pytest

from grader import cli
from grader.cli import grade_class, grade_file, starter

from ..conftest import SUBMISSIONS

CORRECT = SUBMISSIONS / "correct_numpy.py"
FOLDER = SUBMISSIONS


def refusal(capsys, *argv) -> str:
    assert cli.main([*map(str, argv)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grader: ") and err.count("\n") == 1, err  # one line, no traceback
    return err


@pytest.mark.parametrize(("argv", "option", "owner"), [
    ([FOLDER, "--csv", "g.csv", "--json", "r.json"], "--json", "grade"),
    ([FOLDER, "--csv", "g.csv", "--helper", "h.py"], "--helper", "grade"),
    ([CORRECT, "--moodle-worksheet", "w.csv"], "--moodle-worksheet", "class"),
    ([CORRECT, "--canvas-gradebook", "c.csv"], "--canvas-gradebook", "class"),
    ([CORRECT, "--csv", "g.csv"], "--csv", "class"),
    (["grade", CORRECT, "--jobs", "2"], "--jobs", "class"),
    (["template", "--seed", "3"], "--seed", "grade, class, gradescope"),
    (["class-page", "g.csv", "--json=r.json"], "--json", "grade"),
    (["secret", "s.txt", "--out", "x"], "--out", "template, class-page, bundle"),
])
def test_an_option_of_another_command_is_refused_by_name(capsys, argv, option, owner):
    err = refusal(capsys, *argv, "--lang", "en")
    assert f"{option} is not an option of python -m grader" in err and f"it belongs to: {owner}" in err


def test_the_refusal_is_in_portuguese_when_asked(capsys):
    err = refusal(capsys, CORRECT, "--moodle-feedback", "f.zip", "--lang", "pt")
    assert "--moodle-feedback não é uma opção de python -m grader grade; ela pertence a: class" in err


@pytest.mark.parametrize(("argv", "phrase"), [
    (["--similarity-threshold", "0.5"], "--similarity-threshold applies only with --class-page"),
    (["--canvas-assignment", "Tarefa (12)"], "--canvas-assignment applies only with --canvas-gradebook"),
    (["--canvas-gradebook", "c.csv"], "--canvas-gradebook needs --canvas-assignment"),
    (["--canvas-gradebook", "c.csv", "--canvas-assignment", "Tarefa"], "'Name (id)'"),
    (["--out-of", "0"], "--out-of must be a positive number of points, got 0"),
    (["--jobs", "0"], "--jobs must be a positive integer"),
    (["--lms-pattern", "sigaa"], "must be NAME=REGEX"),
    (["--lms-pattern", "Sigaa=(?P<student>.+)"], "must be lowercase letters"),
    (["--lms-pattern", "sigaa=(?P<student>.+)_(?P<nome>.+)"], "missing: id; unknown: nome"),
    (["--lms-pattern", "sigaa=(?P<student>[)"], "is not a regular expression"),
])
def test_a_class_is_refused_before_anything_is_graded(capsys, tmp_path, argv, phrase):
    err = refusal(capsys, FOLDER, "--csv", tmp_path / "g.csv", "--seed", "1", *argv, "--lang", "en")
    assert phrase in err
    assert not (tmp_path / "g.csv").exists()  # nothing graded, nothing written


def test_a_bad_lms_pattern_is_worded_in_portuguese(capsys, tmp_path):
    err = refusal(capsys, FOLDER, "--csv", tmp_path / "g.csv", "--seed", "1", "--lms-pattern", "x=(?P<student>.+)",
                  "--lang", "pt")
    assert "precisa dos grupos nomeados" in err and "faltam: id" in err


@pytest.mark.parametrize(("argv", "command"), [
    ([CORRECT], grade_file), (["grade", CORRECT], grade_file), ([FOLDER, "--csv", "g.csv"], grade_class),
    (["class", FOLDER, "--csv", "g.csv"], grade_class), (["batch", FOLDER], grade_class),
    (["--lang", "pt", "--seed", "3", CORRECT], grade_file), (["--template"], starter), (["template"], starter),
    (["--json", "x.json", CORRECT], grade_file),
])
def test_the_command_is_named_or_chosen_from_the_target(argv, command):
    chosen, _, _ = cli._command([str(a) for a in argv], "en", cli.public_seed())
    assert chosen is command


def test_a_zip_is_a_class_only_with_a_gradebook(tmp_path):
    download = tmp_path / "turma.zip"
    download.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip
    assert cli._command([str(download)], "en", 1)[0] is grade_file
    assert cli._command([str(download), "--csv", "g.csv"], "en", 1)[0] is grade_class


def test_the_template_takes_no_target_and_no_r_module(capsys):
    assert "unrecognized arguments: student.py" in refusal(capsys, "--template", "student.py", "--lang", "en")
    assert "question 2's module is written in Python" in refusal(
        capsys, "template", "--language", "r", "--contract", "module", "--lang", "en")


def test_the_template_command_writes_the_same_starter_as_the_old_flag(capsys):
    assert cli.main(["template", "--lang", "pt"]) == 0
    new = capsys.readouterr().out
    assert cli.main(["--template", "--lang", "pt"]) == 0
    assert capsys.readouterr().out == new and "def softmax(" in new


def test_choices_come_from_the_modules_that_own_them():
    from grader import template
    from grader.sandbox import isolation

    parser = starter.parser("en", 1)
    choices = {a.dest: a.choices for a in parser._actions if a.choices}
    assert choices["contract"] == tuple(template.FILE_NAMES) and choices["language"] == template.LANGUAGES
    grading = {a.dest: a.choices for a in grade_file.parser("en", 1)._actions if a.choices}
    assert grading["isolation"] == isolation.MODES
