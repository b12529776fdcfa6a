"""What a student reads, in process: R's notation for an R hand-in, feedback that reads once, and the Portuguese.

The sandbox's share (the R corpus graded, verificar.R run by R, R's parse errors) is tests/grader/test_r_notation.py.
"""

import re

import numpy as np
import pytest

from grader import r_selfcheck, results, rubric, template
from grader.classpage.words import Words
from grader.functions.cases import all_cases
from grader.functions.checks import case_label, check
from grader.functions.contract import DEFAULT_SEED
from grader.lms import feedback_page
from grader.messages import CATALOG, LANGS, Message, notated_key, notation_of, text
from grader.results import GradeResult, word_tests
from grader.rubric import Policy
from grader.sandbox.limits import Limits
from grader.sandbox.outcome import Outcome, Status
from mha.messages import placeholders, written

CASES = all_cases(DEFAULT_SEED)
# Python's notation, as an R student must never read it (case-sensitive: R's NaN and -Inf are fine)
PYTHON_NOTATION = re.compile(r"causal ?= ?(True|False)|\bnan\b|[−-]inf\b|\(\d+,\)|\.T\b|\s@\s"
                             r"|python -m grader [^ ]*\.py|axis=|\bNone\b|NotImplementedError|\(n, n\)")


def python_notation(page: str) -> list[str]:
    return [m.group(0) for m in PYTHON_NOTATION.finditer(page)]


def first(function, group="hidden", **kwargs):
    return next(c for c in CASES if c.function == function and c.group == group
                and all(c.kwargs.get(k) == v for k, v in kwargs.items()))


def verdict_of(case, value, language="r", mistakes=()):
    judged = check(case, Outcome(Status.OK, value=np.asarray(value, dtype=float), dtype="double"), Limits(), Policy())
    return results.TestVerdict(case.function, case.group, 2.0, 3, 1, (case_label(case), judged.detail), judged.notes,
                       tuple(mistakes), language)


# ------------------------------------------------------------------------------------------------ R's notation
def test_every_r_variant_has_its_base_key_and_the_same_placeholders():
    variants = [k for k in CATALOG.entries if k.split(".")[0].endswith(("_r", "_rmd"))]
    assert len(variants) > 20
    for key in variants:
        head, _, rest = key.partition(".")
        notation = head.rsplit("_", 1)[1]
        base = f"{head.rsplit('_', 1)[0]}.{rest}"
        assert base in CATALOG.entries, key
        assert notated_key(base, notation) == key and notated_key(base, "python") == base
        for lang in LANGS:
            assert placeholders(CATALOG.entries[key][lang]) == placeholders(CATALOG.entries[base][lang]), key


@pytest.mark.parametrize("lang", LANGS)
def test_advice_for_a_plain_r_file_never_mentions_chunks_and_for_r_markdown_may(lang):
    values = {"load.skipped_timeout_r": {"where": "x", "seconds": 5}, "load.timeout_r": {"seconds": 30},
              "hint.r_data_file": {}}
    for key, given in values.items():
        assert "chunk" not in Message(key, given).text(lang, notation_of("r", "atencao.R")), key
        assert "chunk" in Message(key, given).text(lang, notation_of("r", "relatorio.Rmd")), key
    every_r_key = [k for k in CATALOG.entries if not k.split(".")[0].endswith("_rmd")
                   and (k.split(".")[0].endswith("_r") or ".r_" in k or k.endswith("_r"))]
    for key in every_r_key:
        assert "chunk" not in CATALOG.entries[key][lang], key


@pytest.mark.parametrize("lang", LANGS)
def test_no_r_variant_and_no_r_only_text_holds_python_notation(lang):
    r_only = ("template.r_", "verify.", "page.check_yourself_r")
    r_texts = [key for key in CATALOG.entries if key.split(".")[0].endswith("_r") or key.startswith(r_only)]
    for key in r_texts:
        assert not python_notation(CATALOG.entries[key][lang]), (key, python_notation(CATALOG.entries[key][lang]))
    for key in (k for k in CATALOG.entries if k.split(".")[0].endswith("_rmd")):
        assert not python_notation(CATALOG.entries[key][lang]), key


@pytest.mark.parametrize("lang", LANGS)
def test_a_hidden_case_reads_causal_true_in_python_and_causal_equals_true_in_r(lang):
    label = case_label(first("attention_weights", causal=True))
    assert "causal=True" in label.text(lang)
    assert "causal = TRUE" in label.text(lang, "r") and "causal=True" not in label.text(lang, "r")


def test_a_vector_where_a_one_by_one_matrix_belongs_reads_as_r_prints_it():
    case = first("softmax")  # the 1 x 1 case: R's apply drops its dimensions
    assert case.reference_output().shape == (1, 1)
    detail = check(case, Outcome(Status.OK, value=np.ones(1), dtype="double"), Limits(), Policy()).detail
    assert detail.text("en") == "expected shape (1, 1), got (1,)."
    assert detail.text("en", "r") == "expected dimensions 1 x 1, got a vector of length 1."
    assert detail.text("pt", "r") == "as dimensões esperadas são 1 x 1, mas veio um vetor de comprimento 1."


def test_nan_and_minus_inf_read_as_r_prints_them():
    case = max((c for c in CASES if c.function == "attention_head" and c.group == "hidden"),
               key=lambda c: c.reference_output().size)
    got = case.reference_output().copy()
    got[1, 0] = np.nan
    detail = check(case, Outcome(Status.OK, value=got, dtype="double"), Limits(), Policy()).detail
    assert "is nan" in detail.text("en") and "is NaN" in detail.text("en", "r")
    mask = next(c for c in CASES if c.function == "causal_mask" and c.group == "hidden" and c.args[0] >= 2)
    wrong = np.zeros((mask.args[0], mask.args[0]))
    said = check(mask, Outcome(Status.OK, value=wrong, dtype="double"), Limits(), Policy()).detail
    assert "−inf" in said.text("en") and "-Inf" in said.text("en", "r") and "inf" not in said.text("pt", "r")


@pytest.mark.parametrize("lang", LANGS)
def test_an_r_students_test_line_holds_no_python_notation(lang):
    case = first("softmax")
    worded = verdict_of(case, np.ones(1), mistakes=("softmax-transposed",)).word(lang)
    assert not python_notation(worded.feedback), worded.feedback
    assert "t(apply(S, 1, f))" in worded.feedback
    python = verdict_of(case, np.ones(1), "python", ("softmax-transposed",)).word(lang)
    assert "(1,)" in python.feedback and "(.T)" in python.feedback


@pytest.mark.parametrize("lang", LANGS)
def test_the_r_starter_is_in_r_notation_and_names_its_language(lang):
    starter = template.render_r(lang)
    assert not python_notation(starter), python_notation(starter)
    assert f"python -m grader student.R --lang {lang}" in starter
    assert 'source("verificar.R"); verificar("student.R")' in starter
    assert "%*%" in starter and "-Inf" in starter and ("causal is TRUE" in starter or "causal é TRUE" in starter)


# ------------------------------------------------------------------------------------------- reads once
def _results(language: str, lang: str) -> GradeResult:
    cases = [c for c in CASES if c.function == "softmax"]
    worked, hidden = (next(c for c in cases if c.group == g) for g in ("worked", "hidden"))
    verdicts = [verdict_of(worked, worked.reference_output().T + 1, language, ("softmax-transposed",)),
                verdict_of(hidden, np.ones(1), language, ("softmax-transposed",)),
                results.TestVerdict("project", "hidden", 2.0, 5, 0, language=language)]
    return GradeResult("Ana Souza", word_tests(verdicts, lang), lang, DEFAULT_SEED, language=language,
                       file="entrega/atenção.R" if language == "r" else "atencao.py")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("language", ["python", "r"])
def test_a_mistake_is_explained_once_per_function_and_each_test_says_only_what_differs(lang, language):
    result = _results(language, lang)
    notation = "r" if language == "r" else "python"
    explanation = Message("mistake.softmax-transposed").text(lang, notation)
    outputs = [t.feedback for t in result.tests]
    assert sum(explanation in o for o in outputs) == 1 and explanation in outputs[0]
    assert text(lang, "mistake_title.softmax-transposed") in outputs[1]  # named again, not explained again
    page = feedback_page.render(result)
    assert page.count(_escaped(explanation)) == 1
    for test in result.tests[:2]:
        assert _escaped(test.differs) in page and explanation not in test.differs


def _escaped(text_: str) -> str:
    import html

    return html.escape(text_)


@pytest.mark.parametrize("lang", LANGS)
def test_an_r_students_page_names_their_own_file_and_an_r_command_and_holds_no_python_notation(lang):
    page = feedback_page.render(_results("r", lang))
    assert not python_notation(page), python_notation(page)
    assert "verificar(&quot;atenção.R&quot;)" in page
    python_page = feedback_page.render(_results("python", lang))
    assert f"python -m grader atencao.py --lang {lang}" in python_page


def test_the_title_never_repeats_in_its_explanation():
    """"[softmax-transposed] softmax volta transposta: a softmax volta transposta" said the title twice."""
    for key in (k for k in CATALOG.entries if k.startswith("mistake_title.")):
        mistake = key.split(".", 1)[1]
        for lang in LANGS:
            title = CATALOG.entries[key][lang].lower()
            for notation in ("python", "r"):
                explained = notated_key(f"mistake.{mistake}", notation)
                if explained in CATALOG.entries:
                    assert title not in CATALOG.entries[explained][lang].lower(), (explained, lang)


# ------------------------------------------------------------------------------------------- Portuguese
def test_a_skipped_statement_is_on_its_line_na_linha():
    said = Message("load.skipped", {"where": Message("load.at_line", {"line": 2}), "error": "x", "hint": ""})
    assert said.text("pt").startswith("A instrução da linha 2 foi pulada")
    cell = Message("load.skipped_timeout_r", {"where": Message("load.at_cell", {"cell": 3, "line": 1}), "seconds": 5})
    assert cell.text("pt").startswith("A expressão da célula 3, linha 1 foi pulada")


def test_zero_points_is_plural():
    assert Words("pt")("reason.zero") == "0 pontos"


def test_corrigir_is_for_grading_and_fixing_is_consertar_with_no_handing_in_in_final_feedback():
    for key, texts in CATALOG.entries.items():
        assert "corrija" not in texts["pt"].lower(), key  # an imperative to the student is always about fixing
    what_to_do = text("pt", "page.what_to_do", function="softmax")
    assert "conserte softmax" in what_to_do and "antes de entregar" not in what_to_do
    assert "antes de entregar" not in Message("page.what_to_do", {"function": "softmax"}).text("pt", "r")


def test_the_loop_mistake_says_where_the_loop_ends():
    for notation in ("python", "r"):
        said = Message("mistake.loop-skips-last-row").text("pt", notation)
        assert "termina uma linha antes da última" in said and "para uma linha antes" not in said


def test_one_wrong_entry_of_one_reads_as_the_only_entry():
    case = first("scaled_scores")  # n = 1: a 1 x 1 matrix
    assert case.reference_output().shape == (1, 1)
    got = case.reference_output() + 1.0
    detail = check(case, Outcome(Status.OK, value=got, dtype="double"), Limits(), Policy()).detail
    assert detail.text("pt") == f"a única entrada está errada (você retornou {written('pt', f'{got[0, 0]:.4g}')})."
    assert "1 de 1" not in detail.text("pt") and "1 of 1" not in detail.text("en")


def test_the_default_rubric_is_named_as_such():
    from pathlib import Path

    from grader.classpage import render
    from grader.records import run_record as record

    run = record.RunRecord(date="2026-11-29", secret_fingerprint="ab12", seed=None, rubric="default", points={},
                           versions={}, lang="pt", submissions="/x", results_dir="/y", stems={}, seconds=1.0)
    facts = dict(render.run_facts(run, Words("pt"), Path("notas.csv"), 30))
    assert facts["Rubrica"] == "a rubrica padrão (grader/rubric.toml): 30 pontos"


def test_the_lms_files_line_says_what_the_numbers_are():
    said = text("pt", "batch.exported", files="notas.csv (14)")
    assert said == "Arquivos para o AVA (quantos alunos há em cada um): notas.csv (14)"


# ------------------------------------------------------------------------------------------- verificar.R
def test_verificar_r_holds_every_public_case_of_the_rubric_and_the_same_labels():
    source = r_selfcheck.render("pt")
    tests = {(function, group) for function, group, _ in rubric.load().tests()}
    assert source.count("\n    list(teste = ") == sum(1 for c in CASES if (c.function, c.group) in tests)
    assert 'rotulo = "Caso oculto com n = 1, d_k = 2, causal = TRUE"' in source
    assert not python_notation(source.split("verificar <- local")[0])


@pytest.mark.parametrize("lang", LANGS)
def test_the_class_page_explains_a_mistake_in_the_notation_of_those_who_made_it(lang):
    from grader.classpage import render

    only_r = render._explanation("softmax-transposed", lang, {"r"})
    only_python = render._explanation("softmax-transposed", lang, {"python"})
    mixed = render._explanation("softmax-transposed", lang, {"python", "r"})
    assert "t(apply(S, 1, f))" in only_r and not python_notation(only_r)
    assert "(.T)" in only_python and "t(apply" not in only_python
    assert "(.T)" in mixed and "t(apply(S, 1, f))" in mixed
