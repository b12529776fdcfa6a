"""What an R student reads, through the real command line and real R: R's notation in every results JSON, feedback
page and Moodle worksheet comment of the R corpus (pt and en); verificar.R run by Rscript agreeing with the
grader's public-seed verdicts; R's parse errors at the student's own file and line.

The in-process share (the catalog's R variants, one test line, one page) is tests/grader/test_student_words.py.
"""

import csv
import html
import json
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.functions.contract import DEFAULT_SEED
from grader.messages import LANGS
from grader.sandbox import isolation, r_language

from .conftest import CORPORA, needs_system

R_CORPUS = CORPORA / "r_corpus"
SHAPES = R_CORPUS / "shapes"
HANDINS = [*sorted(R_CORPUS.glob("*.R")), SHAPES / "report.Rmd", SHAPES / "notebook.qmd", SHAPES / "r_kernel.ipynb",
           SHAPES / "uses_torch.R"]
# Python's notation, as an R student must never read it (case-sensitive: R's NaN and -Inf are fine)
PYTHON_NOTATION = re.compile(r"causal ?= ?(True|False)|\bnan\b|[−-]inf\b|\(\d+,\)|\.T\b|\s@\s"
                             r"|python -m grader [^ ]*\.py|axis=|\bNone\b|NotImplementedError|\(n, n\)")

pytestmark = [
    pytest.mark.skipif(r_language.find() is None, reason=f"R is not installed: apt-get install {r_language.PACKAGES}"),
    needs_system(isolation.namespaces_problem(), "no namespaces here"),
]


def _moodle_class(folder: Path) -> None:
    """The R corpus as Moodle's download lays it out: one folder per participant."""
    for number, path in enumerate(HANDINS, start=1):
        student = folder / f"Aluno {number:02d} {path.stem}_{3000 + number}_assignsubmission_file_"
        student.mkdir()
        shutil.copy(path, student / path.name)


@pytest.fixture(scope="module", params=LANGS)
def graded(run_grader, request, tmp_path_factory):
    lang = request.param
    folder = tmp_path_factory.mktemp(f"class_{lang}")
    _moodle_class(folder)
    out = tmp_path_factory.mktemp(f"out_{lang}")
    proc = run_grader(folder, "--csv", out / "grades.csv", "--jobs", 2, "--timeout", 2, "--lang", lang,
                      "--seed", DEFAULT_SEED, "--feedback-dir", out / "pages", "--moodle-worksheet", out / "ws.csv",
                      timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return lang, out


def test_no_r_student_reads_python_notation_in_results_pages_or_worksheet_comments(graded):
    lang, out = graded
    found = {}
    for path in (out / "grades_results").glob("*.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        assert result["extra_data"]["language"] == "r", path.name
        texts = [result["output"], *(t["output"] for t in result["tests"])]
        found |= {f"{path.name}: {m.group(0)}": text for text in texts for m in PYTHON_NOTATION.finditer(text)}
    pages = list((out / "pages").glob("*.html"))
    assert len(pages) == len(HANDINS)
    for page in pages:
        text = html.unescape(page.read_text(encoding="utf-8"))
        found |= {f"{page.name}: {m.group(0)}": "" for m in PYTHON_NOTATION.finditer(text)}
        assert "verificar(" in text, page.name  # the self-check line: R alone, their own file
    with (out / "ws.csv").open(encoding="utf-8-sig", newline="") as f:
        comments = [row[-1] for row in csv.reader(f)][1:]
    assert len(comments) == len(HANDINS)
    found |= {f"worksheet: {m.group(0)}": c for c in comments for m in PYTHON_NOTATION.finditer(c)}
    assert not found, list(found.items())[:10]


def test_an_r_students_page_explains_each_mistake_once_and_names_their_file(graded):
    lang, out = graded
    page = next(p for p in (out / "pages").glob("*.html") if "mistake_softmax_transposed" in p.name)
    text = html.unescape(page.read_text(encoding="utf-8"))
    sections = text.split("<h2")[1:]  # one per function
    assert sum(section.count("t(apply(S, 1, f))") for section in sections) >= 1
    assert all(section.count("t(apply(S, 1, f))") <= 1 for section in sections), text  # once per function
    assert 'verificar("mistake_softmax_transposed.R")' in text


# ------------------------------------------------------------------------------------------- verificar.R
# Every R file of the corpus verificar.R can read (a notebook needs a JSON reader, which base R has not; a lone
# file that source()s a helper is graded with its folder, where the grader takes the helper)
SELF_CHECKED = [*sorted(R_CORPUS.glob("*.R")), SHAPES / "report.Rmd", SHAPES / "notebook.qmd"]


@pytest.fixture(scope="module")
def verificar(run_grader, tmp_path_factory):
    folder = tmp_path_factory.mktemp("starter")
    proc = run_grader("--template", "--language", "r", "--lang", "en", "--out", folder / "student.R")
    assert proc.returncode == 0, proc.stderr
    return folder / "verificar.R"


def _self_check(verificar: Path, handin: Path, out: Path) -> dict[str, bool]:
    code = (f'source("{verificar}"); v <- verificar("{handin.name}"); '
            f'writeLines(paste(names(v), v, sep = "\\t"), "{out}")')
    done = subprocess.run([shutil.which("Rscript") or "Rscript", "--vanilla", "-e", code], cwd=handin.parent,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return {name: ok == "TRUE" for name, ok in (line.split("\t") for line in out.read_text().splitlines())}


@pytest.fixture(scope="module")
def both_verdicts(run_grader, verificar, tmp_path_factory) -> dict[Path, tuple[dict[str, bool], dict[str, bool]]]:
    """Each self-checked hand-in's public-seed verdicts by test: the grader's (its command line on the one file,
    as a student runs it) and verificar.R's (Rscript alone). Two hand-ins at a time, one per core."""
    def verdicts(handin: Path) -> tuple[dict[str, bool], dict[str, bool]]:
        out = tmp_path_factory.mktemp(handin.stem)
        graded = run_grader(handin, "--lang", "en", "--seed", DEFAULT_SEED, "--json", out / "r.json",
                            cwd=handin.parent, timeout=300)
        assert graded.returncode in (0, 1), graded.stderr[-2000:]
        grader = {t["name"]: t["status"] == "passed" for t in json.loads((out / "r.json").read_text())["tests"]}
        return grader, _self_check(verificar, handin, out / "verdicts.tsv")

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(SELF_CHECKED, pool.map(verdicts, SELF_CHECKED), strict=True))


@pytest.mark.parametrize("handin", SELF_CHECKED, ids=lambda p: p.name)
def test_verificar_in_r_alone_agrees_with_the_graders_public_verdicts(both_verdicts, handin):
    grader, in_r = both_verdicts[handin]
    assert in_r == grader


def test_verificar_says_what_differs_in_portuguese(run_grader, tmp_path):
    proc = run_grader("--template", "--language", "r", "--lang", "pt", "--out", tmp_path / "student.R")
    assert proc.returncode == 0, proc.stderr
    shutil.copy(R_CORPUS / "mistake_softmax_transposed.R", tmp_path / "atencao.R")
    done = subprocess.run([shutil.which("Rscript") or "Rscript", "--vanilla", "-e",
                           'source("verificar.R"); invisible(verificar("atencao.R"))'], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "softmax: casos ocultos: FALHOU" in done.stdout, done.stdout
    assert "project: exemplo resolvido: ok" in done.stdout
    assert "testes passam com os casos públicos" in done.stdout


# ------------------------------------------------------------------------------------------- R's errors
BROKEN = """project <- function(X, W) X %*% W

scaled_scores <- function(Q, K) {
  Q %*% t(K) / sqrt(ncol(Q)
}
"""


def test_a_parse_error_names_the_students_file_and_line_and_keeps_rs_context_lines(run_grader, tmp_path):
    path = tmp_path / "atencao.R"
    path.write_text(BROKEN, encoding="utf-8")
    run_grader(path, "--lang", "pt", "--json", tmp_path / "r.json")
    said = json.loads((tmp_path / "r.json").read_text())["output"]
    assert "student.R" not in said and "atencao.R (linha 5)" in said, said
    assert "\n4:   Q %*% t(K) / sqrt(ncol(Q)\n5: }\n" in said, said


def test_a_parse_error_in_r_markdown_is_at_the_documents_line(run_grader, tmp_path):
    path = tmp_path / "relatorio.Rmd"
    path.write_text("---\ntitle: Atenção\n---\n\nTexto.\n\n```{r}\n" + BROKEN + "```\n", encoding="utf-8")
    run_grader(path, "--lang", "en", "--json", tmp_path / "r.json")
    said = json.loads((tmp_path / "r.json").read_text())["output"]
    assert "relatorio.Rmd (line 12)" in said and "\n11:   Q %*% t(K)" in said and "\n12: }" in said, said


def test_an_error_in_a_notebooks_function_is_at_its_cell_and_line(run_grader, tmp_path):
    def cell(source: str, kind: str = "code") -> dict:
        return {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True),
                **({"outputs": [], "execution_count": None} if kind == "code" else {})}

    notebook = {"cells": [cell("# Atenção", "markdown"), cell("project <- function(X, W) X %*% W\n"),
                          cell("scaled_scores <- function(Q, K) {\n  stop(\"boom\")\n}\n")],
                "metadata": {"kernelspec": {"language": "R", "name": "ir", "display_name": "R"}},
                "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "caderno.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    run_grader(path, "--lang", "en", "--json", tmp_path / "r.json")
    tests = json.loads((tmp_path / "r.json").read_text())["tests"]
    said = next(t["output"] for t in tests if t["name"].startswith("scaled_scores"))
    assert re.search(r"boom \(cell \d, line 2 of your notebook\)", said), said
