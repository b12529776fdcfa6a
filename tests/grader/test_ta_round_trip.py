"""A TA's round trip, as docs/instructors.md tells it: a Moodle 4.1 zip with accented names, R and Python hand-ins,
an empty file and a parse error, graded with --out-of 10 into the gradebook, Moodle's worksheet and a folder of
feedback pages; then the class page rebuilt from the saved gradebook, which reads the hand-ins from the zip.

Also what a lone file's helpers become (a neighbour it imports, taken or not), and the worksheet's identifier and
comment read as Moodle's own importer reads them."""

import csv
import html
import io
import json
import re
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
import pytest

from grader.batch import Row, summary
from grader.classpage.words import Words
from grader.intake.handin import HandIn, Refusal, open_path
from grader.lms.exports import Graded
from grader.lms.moodle import Worksheet as MoodleWorksheet
from grader.messages import text
from grader.results import NAMED_MISTAKES, GradeResult
from grader.results import TestResult as Verdict  # not collected as a test class
from grader.sandbox import r_language

from .conftest import CORPORA, SUBMISSIONS
from .corpora.lms_downloads import write_zip

R_CORPUS = CORPORA / "r_corpus"
SECRET = "cd" * 32
FOLDER = "{name}_{pid}_assignsubmission_file"  # Moodle 4.1's folder per student (no trailing "_")
# get_string('hiddenuser', 'assign') as Moodle's language files hold it, copied here and not from the grader:
# mod/assign/lang/en/assign.php ('Participant ', with its space) and the pt_br language pack's assign.php
# (3.0 and 3.11: 'Participante', without one).
HIDDENUSER = {"en": "Participant ", "pt": "Participante"}
TEMPORARY = "grader-download-"  # the prefix of the grader's own unpacked copy of a zip: never in a message
# (participant id, full name, file, its text, total out of 30: None for "some points lost")
CLASS = [
    ("3061501", "Ana Beatriz Conceição", "atencao.py", (SUBMISSIONS / "correct_numpy.py").read_text(), 30),
    ("3061502", "João Pedro Araújo", "atencao.R", (R_CORPUS / "correct_matrix.R").read_text(), 30),
    ("3061503", "Márcia Gonçalves", "atencao.py", (SUBMISSIONS / "mistake_missing_scale.py").read_text(), None),
    ("3061504", "Zé Ninguém", "atencao.py", "", 0),
    ("3061505", "Érica Vírgula", "atencao.py", (SUBMISSIONS / "adv_syntax_error.py").read_text(), 0),
    ("3061506", "Lúcia Ordem", "atencao.R", (R_CORPUS / "mistake_heads_concat_order.R").read_text(), None),
    ("3061507", "Caio Ordem", "atencao.py", (SUBMISSIONS / "mistake_heads_concat_order.py").read_text(), None),
]
OUT_OF = 10


def moodle_import(path: Path, lang: str) -> dict[str, tuple[float, str]]:
    """assignfeedback_offline's importer (importgradeslib.php): the columns found by their names, and the id is
    ``substr($idstr, strlen(get_string('hiddenuser', 'assign')))``, a byte count; it must then be the participant
    id exactly, as Moodle's own export (gradingtable's col_recordid: the string, then the id) writes it."""
    from grader.lms.moodle import COLUMNS as MOODLE_COLUMNS

    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    header = rows[0]
    ident, grade, comments = (header.index(MOODLE_COLUMNS[lang][i]) for i in (0, 4, 9))
    found = {}
    for row in rows[1:]:
        raw = row[ident].encode("utf-8")
        pid = raw[len(HIDDENUSER[lang].encode("utf-8")):].decode("utf-8")
        assert re.fullmatch(r"\d+", pid), row[ident]
        assert row[ident] == HIDDENUSER[lang] + pid  # as Moodle writes it in that language
        found[pid] = (float(row[grade]), row[comments])
    return found


@pytest.fixture(scope="module")
def round_trip(run_grader, tmp_path_factory):
    root = tmp_path_factory.mktemp("ta")
    (root / "secret.txt").write_text(SECRET)
    members = {f"{FOLDER.format(name=name, pid=pid)}/{file}": body for pid, name, file, body, _ in CLASS}
    write_zip(root / "submissions.zip", members)
    # As docs/instructors.md writes it, from the folder the TA works in: relative paths, pages/ for the pages.
    batch = run_grader("submissions.zip", "--csv", "grades.csv", "--jobs", 2, "--secret-file", "secret.txt",
                       "--lang", "pt", "--out-of", OUT_OF, "--moodle-worksheet", "worksheet.csv",
                       "--feedback-dir", "pages/", cwd=root, timeout=600)
    assert batch.returncode == 0, batch.stderr[-3000:]
    page = run_grader("class-page", "grades.csv", "--out", "turma.html", "--lang", "pt", cwd=root, timeout=300)
    assert page.returncode == 0, page.stderr[-3000:]
    book = pd.read_csv(root / "grades.csv", dtype=str, keep_default_na=False).set_index("lms_id")
    return root, batch, page, book


def test_the_summary_is_printed_once_with_its_mean_on_the_out_of_scale(round_trip):
    _, batch, _, book = round_trip
    assert batch.stdout.count("submissões corrigidas em") == 1, batch.stdout
    scaled = [round(float(t) / float(m) * OUT_OF, 2) for t, m in zip(book["total"], book["max_total"], strict=True)]
    mean = f"{sum(scaled) / len(scaled):.1f}".replace(".", ",")
    assert f"nota média {mean} / {OUT_OF}" in batch.stdout, batch.stdout


def test_the_empty_file_is_refused_as_empty_in_its_row_the_summary_and_its_feedback(round_trip):
    root, batch, _, book = round_trip
    row = book.loc["3061504"]
    assert (row["status"], float(row["total"])) == ("refused", 0.0)
    assert "arquivo vazio" in row["reason"]
    assert re.search(r"Zé Ninguém fica com 0 \(.*\): atencao\.py é um arquivo vazio", batch.stdout), batch.stdout
    stem = json.loads((root / "grades.run.json").read_text())["stems"][row["student"]]
    page = html.unescape((root / "pages" / f"{stem}.html").read_text())
    assert page.count("arquivo vazio") == 1 and "não define" not in page


def test_each_row_gets_its_grade_and_its_mistakes(round_trip):
    _, _, _, book = round_trip
    for pid, _, file, _, total in CLASS:
        got = float(book.loc[pid, "total"])
        if file.endswith(".R") and r_language.find() is None:  # refused, naming the packages to install
            assert (got, book.loc[pid, "status"]) == (0, "refused"), pid
            continue
        assert (0 < got < 30) if total is None else got == total, (pid, book.loc[pid, "reason"])
    assert book.loc["3061505", "status"] == "import failed"
    assert book.loc["3061507", "mistakes"] == "heads-concat-order"
    if r_language.find() is not None:
        assert book.loc["3061506", "mistakes"] == "heads-concat-order"  # R's twin, named alike


def test_the_worksheet_is_read_back_by_moodles_rule_with_comments_on_the_scale_in_words(round_trip):
    root, _, _, book = round_trip
    grades = moodle_import(root / "worksheet.csv", "pt")
    assert set(grades) == {pid for pid, *_ in CLASS}
    for pid, (grade, comment) in grades.items():
        assert grade == round(float(book.loc[pid, "total"]) / 30 * OUT_OF, 2)
        points = f"{grade:g}".replace(".", ",")
        assert comment.startswith(f"Total: {points} / {OUT_OF} pontos."), comment
        assert not any(re.search(rf"(?<![\w-]){m}(?![\w-])", comment) for m in NAMED_MISTAKES), comment
    assert text("pt", "mistake_title.missing-scale") in grades["3061503"][1]
    assert text("pt", "mistake_title.heads-concat-order") in grades["3061507"][1]
    assert "Motivo:" in grades["3061504"][1] and "arquivo vazio" in grades["3061504"][1]
    assert "Motivo:" in grades["3061505"][1] and "SyntaxError" in grades["3061505"][1]


def test_the_class_page_rebuilt_later_reads_the_zip_and_links_every_named_student(round_trip):
    root, batch, page, book = round_trip
    written = (root / "turma.html").read_text()
    assert Words("pt")("similarity.not_run", folder="x").split("(")[0] not in written  # the zip was read
    links = [unquote(h) for h in re.findall(r'href="([^"#][^"]*)"', written)]
    assert links and all((root / link).is_file() for link in links), links
    linked = {Path(link).stem for link in links}
    stems = json.loads((root / "grades.run.json").read_text())["stems"]
    for pid in ("3061503", "3061504", "3061505", "3061507"):  # a mistake named, or a 0: named on the page
        assert stems[book.loc[pid, "student"]] in linked, pid
    everything = batch.stdout + batch.stderr + page.stdout + page.stderr + written
    everything += (root / "grades.run.json").read_text()
    assert TEMPORARY not in everything


def test_the_class_page_reads_a_zip_given_with_submissions_and_names_only_what_it_was_given(run_grader, round_trip,
                                                                                            tmp_path):
    root, *_ = round_trip
    good = run_grader("class-page", root / "grades.csv", "--out", tmp_path / "a.html", "--submissions",
                      root / "submissions.zip", "--lang", "en", timeout=300)
    assert good.returncode == 0, good.stderr[-2000:]
    assert "could not be read" not in (tmp_path / "a.html").read_text()
    (tmp_path / "broken.zip").write_bytes(b"not a zip")
    bad = run_grader("class-page", root / "grades.csv", "--out", tmp_path / "b.html", "--submissions",
                     tmp_path / "broken.zip", "--lang", "en", timeout=300)
    assert bad.returncode == 0, bad.stderr[-2000:]
    shown = (tmp_path / "b.html").read_text()
    assert str(tmp_path / "broken.zip") in shown and TEMPORARY not in shown  # the zip it was given, by name


# --- the worksheet's identifier and comment, and the summary's mean, from results made here ---


def _result(score: float, mistakes: tuple[str, ...] = (), status: str = "graded", reason: str = "",
            lang: str = "pt") -> GradeResult:
    tests = [Verdict("softmax: casos ocultos", "softmax", "hidden", score, True, ""),
             Verdict("softmax: exemplo", "softmax", "worked", 30 - score, False, "", mistakes)]
    return GradeResult("x", tests, lang, 0, status=status, reason=reason)


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_identifier_is_moodles_hiddenuser_string_then_the_id(tmp_path, lang):
    rows = [Graded("Ana", "moodle", "1874501", "Ana Conceição", "ana", _result(9, ("missing-scale",), lang=lang)),
            Graded("Zé", "moodle", "1874502", "Zé", "ze", _result(0, (), "refused", "atencao.py: empty", lang))]
    assert MoodleWorksheet(tmp_path / "w.csv", lang).write(rows, OUT_OF) == 2
    grades = moodle_import(tmp_path / "w.csv", lang)
    assert grades["1874501"][0] == 3 and grades["1874502"][0] == 0
    assert "missing-scale" not in grades["1874501"][1]
    assert text(lang, "mistake_title.missing-scale") in grades["1874501"][1]
    assert "3 / 10" in grades["1874501"][1] and "atencao.py: empty" in grades["1874502"][1]
    if lang == "pt":
        assert (tmp_path / "w.csv").read_text(encoding="utf-8-sig").splitlines()[1].startswith("Participante1874501,")


def test_the_summarys_mean_is_on_the_out_of_scale_when_given():
    rows = [Row("a", _result(30)), Row("b", _result(9)), Row("c", None, error="boom")]
    assert "nota média 13,0 / 30" in summary(rows, 30, 1.0, "pt")
    assert "nota média 4,3 / 10" in summary(rows, 30, 1.0, "pt", out_of=10)


# --- an empty file, in every shape a student hands one in ---


@pytest.mark.parametrize("name, body", [
    ("vazio.py", ""), ("branco.py", "  \n\t\n"), ("comentario.py", "# só um comentário\n\n# outro\n"),
    ("vazio.R", ""), ("comentario.R", "# nada aqui\r\n\r\n"), ("vazio.ipynb", ""),
    ("texto.Rmd", "---\ntitle: Atenção\n---\n\nSó texto, nenhum chunk.\n"),
    ("chunk.qmd", "```{r}\n# só um comentário\n```\n"),
    ("markdown.ipynb", '{"cells": [{"cell_type": "markdown", "metadata": {}, "source": "oi"}], "metadata": {}, '
                       '"nbformat": 4, "nbformat_minor": 5}'),
])
def test_an_empty_file_is_refused_as_empty_in_both_languages(tmp_path, name, body):
    (tmp_path / name).write_text(body)
    result = open_path(tmp_path / name)
    assert isinstance(result, Refusal) and result.message.key == "intake.empty", result
    assert "arquivo vazio" in result.message.text("pt") and "empty file" in result.message.text("en")


def test_code_that_does_not_run_is_not_called_empty(tmp_path):
    (tmp_path / "nao_roda.Rmd").write_text("```{r eval = FALSE}\nsoftmax <- function(S) S\n```\n")
    (tmp_path / "um.py").write_text("x = 1\n")
    assert all(isinstance(open_path(tmp_path / n), HandIn) for n in ("nao_roda.Rmd", "um.py"))


# --- a lone file and the helper beside it ---

UTILS = ("import numpy as np\n\n\ndef softmax_estavel(S):\n    e = np.exp(S - S.max(axis=1, keepdims=True))\n"
         "    return e / e.sum(axis=1, keepdims=True)\n")
USES_UTILS = (SUBMISSIONS / "correct_numpy.py").read_text().replace(
    "def softmax(S):", "from utils import softmax_estavel\n\n\ndef softmax(S):\n    return softmax_estavel(S)\n\n\n"
                       "def _own_softmax(S):")
R_UTILS = "softmax_estavel <- function(S) {\n  E <- exp(S - apply(S, 1, max))\n  E / rowSums(E)\n}\n"
R_USES_UTILS = (R_CORPUS / "correct_matrix.R").read_text().replace(
    "softmax <- function(S) {", 'source("utils.R")\n\nsoftmax <- function(S) softmax_estavel(S)\n\n'
                                "own_softmax <- function(S) {")


def test_a_lone_file_takes_the_helper_beside_it_that_it_imports_and_says_so(run_grader, tmp_path):
    (tmp_path / "utils.py").write_text(UTILS)
    (tmp_path / "atencao.py").write_text(USES_UTILS)
    proc = run_grader(tmp_path / "atencao.py", "--lang", "pt", timeout=300)
    assert proc.returncode == 0 and "Total: 30 / 30" in proc.stdout, proc.stdout[-3000:]
    assert "utils.py, ao lado do seu arquivo, foi carregado junto com ele como auxiliar" in proc.stdout


@pytest.mark.skipif(r_language.find() is None, reason=f"R is not installed: apt-get install {r_language.PACKAGES}")
def test_a_lone_r_file_takes_the_file_it_sources_beside_it(run_grader, tmp_path):
    assert "softmax <- function(S) {" in (R_CORPUS / "correct_matrix.R").read_text()
    (tmp_path / "utils.R").write_text(R_UTILS)
    (tmp_path / "atencao.R").write_text(R_USES_UTILS)
    proc = run_grader(tmp_path / "atencao.R", "--lang", "en", timeout=300)
    assert proc.returncode == 0 and "Total: 30 / 30" in proc.stdout, proc.stdout[-3000:]
    assert "utils.R, beside your file, was loaded with it as its helper" in proc.stdout


def test_a_lone_file_whose_helper_is_missing_is_told_which_file_and_how_to_hand_it_in(run_grader, tmp_path):
    (tmp_path / "atencao.py").write_text(USES_UTILS)
    proc = run_grader(tmp_path / "atencao.py", "--lang", "en", timeout=300)
    assert proc.returncode == 1 and "Total: 30 / 30" not in proc.stdout, proc.stdout[-3000:]
    assert "No module named 'utils'" in proc.stdout  # the import is skipped with a note that says what to do:
    assert "No file utils.py came with your file" in proc.stdout and "--helper utils.py" in proc.stdout
    (tmp_path / "atencao.R").write_text(R_USES_UTILS)
    r = open_path(tmp_path / "atencao.R", neighbours=True)
    assert [n.text("en") for n in r.notes if n.key == "intake.source_missing"] == [
        "Your file source()s utils.R, which was not handed in with it: hand in both together (a folder or a zip "
        "with both files), or, checking your file yourself, name it: --helper utils.R."]


def test_a_neighbour_that_is_a_hand_in_is_never_taken_and_the_note_says_why(tmp_path):
    (tmp_path / "utils.py").write_text((SUBMISSIONS / "correct_numpy.py").read_text())  # defines the functions
    (tmp_path / "atencao.py").write_text(USES_UTILS)
    moodle = "Ana_1874501_assignsubmission_file_utils.py"  # named as an LMS names a student's file
    (tmp_path / "outro.py").write_text("from Ana_1874501_assignsubmission_file_utils import softmax_estavel\n")
    (tmp_path / moodle).write_text(UTILS)
    for main, file in (("atencao.py", "utils.py"), ("outro.py", moodle)):
        handin = open_path(tmp_path / main, neighbours=True)
        assert isinstance(handin, HandIn) and handin.helpers == (), main
        assert [n.values["file"] for n in handin.notes if n.key == "intake.helper_refused"] == [file]
    assert open_path(tmp_path / "atencao.py").helpers == ()  # a batch's entry never looks beside itself
