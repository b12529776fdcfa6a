"""The command line as users run it: exit codes, one-line usage errors, --json, --lang, --template, --seed."""

import ast
import json
import math

import pytest

from grader import cli
from grader.functions.contract import FUNCTIONS
from grader.sandbox.limits import Limits

from .conftest import SUBMISSIONS

CORRECT = SUBMISSIONS / "correct_numpy.py"
MISTAKE = SUBMISSIONS / "mistake_missing_scale.py"


def test_full_marks_exit_0_and_a_table_with_every_test_and_the_total(run_grader):
    proc = run_grader(CORRECT, "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    for function in FUNCTIONS:
        assert f"{function}: hidden cases" in proc.stdout
    assert "Total: 30 / 30" in proc.stdout


def test_lost_points_exit_1_with_feedback_and_the_mistake(run_grader):
    proc = run_grader(MISTAKE, "--lang", "en")
    assert proc.returncode == 1
    assert "FAIL" in proc.stdout and "[missing-scale]" in proc.stdout
    assert "Mistakes found: missing-scale" in proc.stdout


def test_code_that_does_not_import_exits_1_not_2(run_grader):
    assert run_grader(SUBMISSIONS / "adv_syntax_error.py").returncode == 1


# Each usage error: the arguments (given the test's folder, which holds notes.txt and rubric.toml) and
# a phrase its one line must hold.
USAGE_ERRORS = [
    pytest.param(lambda tmp: [tmp / "missing.py"], "no such file", id="missing-file"),
    pytest.param(lambda tmp: [tmp / "notes.txt"], "is not a .py, .ipynb, .R, .Rmd, .qmd or .zip file", id="not-python"),
    pytest.param(lambda tmp: [tmp], "needs --csv", id="folder-without-csv"),
    pytest.param(lambda tmp: [CORRECT, "--rubric", tmp / "rubric.toml"], "at most half", id="rubric-over-half"),
    pytest.param(lambda tmp: [CORRECT, "--timeout", "0"], "--timeout must be", id="zero-timeout"),
    pytest.param(lambda tmp: [CORRECT, "--lang", "fr"], "invalid choice", id="unknown-language"),
    pytest.param(lambda tmp: [], "give a student.py", id="no-arguments"),
    pytest.param(lambda tmp: [CORRECT, "--json", "/proc/no-such-dir/results.json"], "No such file or directory",
                 id="json-unwritable"),
]


@pytest.mark.parametrize("arguments, phrase", USAGE_ERRORS)
def test_usage_errors_exit_2_with_one_line_and_no_traceback(run_grader, tmp_path, arguments, phrase):
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "rubric.toml").write_text("[softmax]\nworked = 100\n")
    args = [str(a) for a in arguments(tmp_path)]
    proc = run_grader(*args) if "--lang" in args else run_grader(*args, "--lang", "en")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert phrase in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr



@pytest.mark.parametrize("option, field", [("--timeout", "call_timeout"), ("--import-timeout", "import_timeout"),
                                           ("--budget", "submission_seconds")])
def test_each_time_option_takes_up_to_the_limits_maximum_and_refuses_a_hair_more(run_grader, option, field):
    """One range, Limits.MAX_SECONDS: the command line accepts it, refuses the next float up, and its help says so."""
    most, above = Limits.MAX_SECONDS, math.nextafter(Limits.MAX_SECONDS, math.inf)
    at_the_limit = run_grader(SUBMISSIONS / "adv_syntax_error.py", option, repr(most), "--lang", "en")
    assert at_the_limit.returncode == 1, at_the_limit.stderr  # graded (it does not import), not refused
    refused = run_grader(CORRECT, option, repr(above), "--lang", "en")
    assert refused.returncode == 2 and f"{option} must be a number of seconds in (0, {most:g}]" in refused.stderr
    (action,) = [a for a in cli.grade_file.parser("en", cli.public_seed())._actions if option in a.option_strings]
    assert f"at most {most:g}" in action.help
    with pytest.raises(ValueError, match=f"{field} must be a number of seconds in \\(0, {most:g}\\]"):
        Limits(**{field: above})

def test_json_writes_gradescope_results(run_grader, tmp_path):
    out = tmp_path / "results.json"
    proc = run_grader(MISTAKE, "--json", out, "--lang", "en")
    assert proc.returncode == 1
    result = json.loads(out.read_text())
    assert result["score"] == sum(t["score"] for t in result["tests"]) < 30
    assert result["execution_time"] > 0
    assert result["extra_data"]["mistakes"] == ["missing-scale"]
    failed = [t for t in result["tests"] if t["status"] == "failed"]
    assert failed[0]["name"] == "scaled_scores: worked example" and failed[0]["visibility"] == "visible"


def test_lang_pt_speaks_portuguese_and_lang_defaults_from_LANG(run_grader):
    explicit = run_grader(MISTAKE, "--lang", "pt")
    from_env = run_grader(MISTAKE, env={"LANG": "pt_BR.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""})
    english = run_grader(MISTAKE, env={"LANG": "en_US.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""})
    assert "casos ocultos" in explicit.stdout and "Erros identificados: missing-scale" in explicit.stdout
    assert from_env.stdout == explicit.stdout
    assert "hidden cases" in english.stdout and "casos ocultos" not in english.stdout


def test_template_is_a_valid_starter_that_earns_nothing_and_says_not_implemented(run_grader, tmp_path):
    proc = run_grader("--template", "--lang", "pt")
    assert proc.returncode == 0
    tree = ast.parse(proc.stdout)
    assert [f.name for f in tree.body if isinstance(f, ast.FunctionDef)] == list(FUNCTIONS)
    assert "Passo 2" in proc.stdout
    student = tmp_path / "student.py"
    student.write_text(proc.stdout)
    graded = run_grader(student, "--lang", "en")
    assert graded.returncode == 1
    assert "Total: 0 / 30" in graded.stdout
    assert graded.stdout.count("not implemented yet") == 18


def test_same_seed_same_feedback_other_seed_other_hidden_cases(run_grader):
    first = run_grader(MISTAKE, "--seed", "7", "--lang", "en").stdout
    again = run_grader(MISTAKE, "--seed", "7", "--lang", "en").stdout
    other = run_grader(MISTAKE, "--seed", "8", "--lang", "en").stdout
    assert first == again
    assert first != other


def test_a_batch_without_the_instructors_seed_is_refused_and_writes_nothing(run_grader, tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "a.py").write_text(CORRECT.read_text())
    proc = run_grader(folder, "--csv", tmp_path / "grades.csv", "--lang", "en")
    assert proc.returncode == 2 and "secret" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "grades.csv").exists()


def test_the_secret_comes_from_a_file_or_the_environment_never_shows_and_a_bad_one_grades_nothing(run_grader, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("ab" * 16 + "\n")  # 128 bits, the least accepted
    from_file = run_grader(MISTAKE, "--secret-file", secret, "--json", tmp_path / "r.json", "--lang", "en")
    from_env = run_grader(MISTAKE, "--lang", "en", env={"GRADER_SECRET": "ab" * 16})
    public = run_grader(MISTAKE, "--lang", "en")
    assert from_file.returncode == 1 and from_file.stdout == from_env.stdout != public.stdout
    assert "ab" * 16 not in (tmp_path / "r.json").read_text()
    assert json.loads((tmp_path / "r.json").read_text())["extra_data"]["public_seed"] is False
    secret.write_text("ab" * 15)
    short = run_grader(MISTAKE, "--secret-file", secret, "--json", tmp_path / "short.json")
    missing = run_grader(MISTAKE, "--secret-file", tmp_path / "nowhere.txt", "--json", tmp_path / "missing.json")
    both = run_grader(MISTAKE, "--secret-file", tmp_path / "nowhere.txt", "--seed", "3")
    assert short.returncode == 2 and "at least 128" in short.stderr and "Traceback" not in short.stderr
    assert missing.returncode == 2 and "nothing was graded" in missing.stderr
    assert both.returncode == 2
    assert not (tmp_path / "short.json").exists() and not (tmp_path / "missing.json").exists()


def test_the_secret_command_writes_a_fresh_private_secret_and_never_overwrites_one(run_grader, tmp_path):
    made = [run_grader("secret", tmp_path / name) for name in ("a.txt", "b.txt")]
    assert all(p.returncode == 0 for p in made)
    first, second = ((tmp_path / n).read_text().strip() for n in ("a.txt", "b.txt"))
    assert first != second and len(bytes.fromhex(first)) >= 16
    assert (tmp_path / "a.txt").stat().st_mode & 0o077 == 0
    again = run_grader("secret", tmp_path / "a.txt")
    assert again.returncode == 2 and (tmp_path / "a.txt").read_text().strip() == first


def test_gradebook_cells_that_a_spreadsheet_would_run_are_quoted(run_grader, tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "=HYPERLINK(1).py").write_text(CORRECT.read_text())
    (folder / "plain.py").write_text(CORRECT.read_text())
    proc = run_grader(folder, "--csv", tmp_path / "grades.csv", "--seed", "11")
    assert proc.returncode == 0, proc.stderr
    rows = (tmp_path / "grades.csv").read_text().splitlines()
    assert any(r.startswith("'=HYPERLINK(1),30.0") for r in rows) and any(r.startswith("plain,30.0") for r in rows)
