"""Question 1 written in R: every shape a student hands in, graded in the same sandbox by the same judge.

The corpus is tests/grader/corpora/r_corpus/: correct files in several R idioms, one file per R mistake (its Python
twin is in tests/grader/corpora/submissions/), and the shapes (R Markdown, Quarto, an IRkernel notebook, a folder that
source()s a helper, a file full of lines that fail where grading runs). One mixed batch (R and Python, plain
files and Moodle's layout, two jobs) grades them all through the real command line; single files, the
template, Gradescope's entry point and a machine without R are graded on their own.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grader import rubric
from grader.functions.contract import DEFAULT_SEED
from grader.sandbox import isolation, r_language

from ..conftest import SUBMISSIONS, needs_system
from ..corpora.r_class import MISTAKES, R_CORPUS, SHAPES, _stem

RUBRIC = rubric.load()
FULL = RUBRIC.total
POINTS = {f: sum(p for (fn, _), p in RUBRIC.points.items() if fn == f) for f in {f for f, _ in RUBRIC.points}}
CORRECT = sorted(p.stem for p in R_CORPUS.glob("correct_*.R"))

pytestmark = [
    pytest.mark.skipif(r_language.find() is None, reason=f"R is not installed: apt-get install {r_language.PACKAGES}"),
    needs_system(isolation.namespaces_problem(), "no namespaces here"),
    pytest.mark.timeout(1500),  # the R class's batch (graded_r_class) holds test_attribution.py's students too
]


@pytest.fixture(scope="module")
def batch(graded_r_class):
    """Every R file of the corpus, its shapes and the Python twins of its mistakes, graded as one batch (with
    module/test_attribution.py's R idioms and their twins: tests/grader/corpora/r_class.py)."""
    return graded_r_class.gradebook, graded_r_class.results


def feedback(result) -> str:
    return result["output"] + " " + " ".join(t["output"] for t in result["tests"])


@pytest.mark.parametrize("name", [*CORRECT, "report", "notebook", "r_kernel", "with_helper", "crlf", "cp1252",
                                  "Ana Souza", "souzaana", "zipped", "tolerant"])
def test_every_correct_r_hand_in_gets_full_marks_in_a_mixed_batch(batch, name):
    book, results = batch
    assert book.loc[name, "total"] == FULL, feedback(results[name])[:3000]
    assert book.loc[name, "mistakes"] == ""


def test_the_python_students_of_the_same_batch_are_graded_as_before(batch):
    book, _ = batch
    assert book.loc["py_correct", "total"] == FULL
    assert (book["error"] == "").all()


@pytest.mark.parametrize("mistake", MISTAKES)
def test_each_r_mistake_loses_what_its_python_twin_loses_and_is_named(batch, mistake):
    book, results = batch
    r_row, py_row = book.loc[_stem(mistake)], book.loc[f"py_{_stem(mistake)}"]
    assert r_row["mistakes"] == mistake, feedback(results[_stem(mistake)])[:3000]
    assert py_row["mistakes"] == mistake
    assert 0 < r_row["total"] < FULL
    assert r_row["total"] == py_row["total"]


def test_r_mistakes_are_worded_in_r_and_python_ones_in_python(batch):
    _, results = batch
    assert "t(apply(S, 1, f))" in feedback(results["mistake_softmax_transposed"])
    assert "(.T)" in feedback(results["py_mistake_softmax_transposed"])
    assert "upper.tri(M, diag = TRUE)" in feedback(results["mistake_mask_excludes_diagonal"])
    assert "%*%" in feedback(results["mistake_elementwise_product"])


def test_one_to_n_minus_one_counting_down_costs_only_the_one_by_one_cases_and_says_why(batch):
    book, results = batch
    with_one_row = ("causal_mask", "attention_weights", "attention_head")  # their hidden cases hold n = 1
    assert book.loc["mask_counts_down", "total"] == FULL - sum(RUBRIC.points[(f, "hidden")] for f in with_one_row)
    assert "1:(n - 1) counts down when n = 1" in feedback(results["mask_counts_down"])


def test_lines_that_fail_where_grading_runs_are_skipped_with_their_line_and_why(batch):
    _, results = batch
    notes = results["tolerant"]["output"]
    for line in (2, 3, 4, 5, 6):
        assert f"line {line}" in notes, notes
    assert "The R package ggplot2 is not installed" in notes
    assert "setwd()" in notes and "system() is not available" in notes
    assert "ran longer than" in notes and "inside a function you do not call" in notes  # line 5, the while loop
    assert "(3 more statements were skipped.)" in notes  # read.csv, View, q


def test_torch_in_r_is_named_and_the_base_r_functions_still_count(batch):
    book, results = batch
    assert book.loc["uses_torch", "total"] == FULL - POINTS["project"]
    assert "R package torch" in results["uses_torch"]["output"]


def test_an_r_markdown_chunk_with_eval_false_and_a_python_chunk_are_not_run(batch):
    _, results = batch
    output = feedback(results["report"]) + feedback(results["notebook"])
    assert "must not run" not in output and "not R" not in output and "dados.csv" not in output


def test_a_notebook_is_r_by_its_kernel_and_a_cell_that_is_not_r_is_skipped_by_its_number(batch):
    _, results = batch
    assert "cell 3" in results["r_kernel"]["output"], results["r_kernel"]["output"]


def test_a_cp1252_file_gets_the_same_note_as_in_python(batch):
    _, results = batch
    assert "cp1252" in results["cp1252"]["output"]


def test_a_correct_r_file_graded_alone_in_portuguese(run_grader, tmp_path):
    proc = run_grader(R_CORPUS / "correct_matrix.R", "--lang", "pt", "--json", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads((tmp_path / "r.json").read_text())["score"] == FULL


def test_an_r_mistake_graded_alone_is_worded_in_portuguese_in_r_terms(run_grader, tmp_path):
    proc = run_grader(R_CORPUS / "mistake_softmax_transposed.R", "--lang", "pt", "--json", tmp_path / "r.json")
    assert proc.returncode == 1
    assert "envolva-o em t()" in proc.stdout


def test_the_r_template_parses_and_every_function_says_not_implemented(run_grader, tmp_path):
    proc = run_grader("--template", "--language", "r", "--lang", "pt", "--out", tmp_path / "student.R")
    assert proc.returncode == 0, proc.stderr
    source = (tmp_path / "student.R").read_text(encoding="utf-8")
    assert source.startswith("#' Questão 1") and "multi_head_attention <- function(X, W_Q, W_K, W_V, W_O, " \
                                                    "causal = TRUE)" in source
    graded = run_grader(tmp_path / "student.R", "--lang", "en", "--json", tmp_path / "r.json")
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["score"] == 0
    assert all("not implemented" in t["output"] for t in result["tests"]), graded.stdout[-2000:]


def test_gradescope_grades_an_r_submission_folder(run_grader, tmp_path):
    submission = tmp_path / "submission"
    shutil.copytree(SHAPES / "folder", submission)
    secret = tmp_path / "secret.txt"
    secret.write_text("ab" * 32)
    proc = run_grader("gradescope", submission, tmp_path / "results.json", "--secret-file", secret, "--lang", "en")
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["score"] == FULL, result["output"]


def test_without_r_an_r_hand_in_gets_a_row_naming_what_to_install_and_python_is_unaffected(run_grader, tmp_path):
    path = tmp_path / "bin"  # a PATH without R
    path.mkdir()
    folder = tmp_path / "batch"
    folder.mkdir()
    shutil.copy(R_CORPUS / "correct_matrix.R", folder / "r_student.R")
    shutil.copy(SUBMISSIONS / "correct_numpy.py", folder / "py_student.py")
    # trusted: the refusal is the intake's, whatever the isolation (an empty PATH has no bubblewrap either)
    proc = run_grader(folder, "--csv", tmp_path / "grades.csv", "--seed", DEFAULT_SEED, "--lang", "en",
                      "--isolation", "trusted", env={"PATH": str(path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    book = pd.read_csv(tmp_path / "grades.csv", keep_default_na=False).set_index("student")
    assert book.loc["py_student", "total"] == FULL
    assert book.loc["r_student", "total"] == 0
    assert book.loc["r_student", "status"] == "refused"
    assert "r-base-core r-cran-jsonlite" in book.loc["r_student", "reason"]


def test_r_is_started_clean(run_grader, tmp_path):
    """What the student's R sees: no profile, no library but the runner's, the runner's state out of reach."""
    probe = tmp_path / "probe.R"
    probe.write_text("\n".join([
        'cat("LIBS:", .libPaths(), "\\n")',
        'cat("ENV:", names(Sys.getenv())[grepl("^R_(LIBS|ENVIRON|PROFILE)", names(Sys.getenv()))], "\\n")',
        'cat("RUNNER:", exists("send"), exists("token"), exists("read_frame"), "\\n")',
        'rm(list = ls(all.names = TRUE))',
        'source("correct_matrix.R")',  # not handed in: skipped
    ]) + "\n" + (R_CORPUS / "correct_matrix.R").read_text(), encoding="utf-8")
    proc = run_grader(probe, "--lang", "en", "--json", tmp_path / "r.json")
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["score"] == FULL, proc.stdout[-3000:]
    output = result["output"]
    assert "RUNNER: FALSE FALSE FALSE" in output
    assert "/usr/local/lib/R" not in output.split("LIBS:")[1].split("\n")[0]
    assert "R_ENVIRON" not in output and "R_PROFILE" not in output


def test_the_runner_needs_nothing_but_r_and_jsonlite():
    source = (Path(r_language.__file__).with_name("r_runner.R")).read_text()
    used = {line.split("::")[0].split()[-1].lstrip("(") for line in source.splitlines() if "::" in line
            and not line.lstrip().startswith("#")}
    assert used <= {"jsonlite"}
    assert subprocess.run([shutil.which("R") or "R", "--vanilla", "--no-echo", "-e",
                           f'invisible(parse("{Path(r_language.__file__).with_name("r_runner.R")}"))'],
                          capture_output=True, env={"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"},
                          timeout=60).returncode == 0
    assert sys.executable


def test_a_sourced_helper_is_loaded_beside_its_file_and_not_taken_for_another_submission(batch):
    _, results = batch
    output = results["with_helper"]["output"]
    assert "utils.R was loaded beside your file" in output, output
    assert "Graded" not in output


@pytest.mark.sandbox  # starts the sandbox its own way (the fast lane refuses it: tests/conftest.py)
def test_values_come_back_bit_for_bit_and_a_non_numeric_answer_is_named(handin, tmp_path):
    from grader.sandbox.session import Sandbox

    source = tmp_path / "echo.R"
    source.write_text('project <- function(X, W) X\n'
                      'scaled_scores <- function(Q, K) list(Q, K)\n'
                      'causal_mask <- function(n) matrix("a", n, n)\n'
                      'softmax <- function(S) invisible(NULL)\n')
    special = np.array([[5e-324, -0.0, 1 / 3, 1e308], [np.inf, -np.inf, 0.1 + 0.2, -2.5e-310]])
    with Sandbox(handin(source), ["project", "scaled_scores", "causal_mask", "softmax"], imports=RUBRIC.imports) as box:
        assert box.start().status == "ok"
        echoed = box.call("project", [special, np.eye(4)])
        assert echoed.status == "ok" and echoed.dtype == "double"
        assert echoed.value.tobytes() == special.tobytes()  # raw float64 both ways: no rounding, signs kept
        listed = box.call("scaled_scores", [special, special])
        assert (listed.status, listed.stage, listed.dtype) == ("error", "convert", "list")
        assert box.call("causal_mask", [2]).error == "character"
        assert box.call("softmax", [special]).dtype == "NULL"


def test_the_trusted_mode_runs_r_the_same_way(run_grader, tmp_path):
    proc = run_grader(R_CORPUS / "correct_loops.R", "--isolation", "trusted", "--lang", "en",
                      "--json", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads((tmp_path / "r.json").read_text())["score"] == FULL
