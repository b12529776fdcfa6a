"""verificar.R: an R student's self-check in R alone, written from the grader's own public cases.

Most R students have no Python. ``render(lang)`` writes an R file (base R only) that holds every public case
of question 1 (the worked example and the hidden and large cases of the public seed, as ``grader.functions.cases`` draws
them), each with the reference's value and the case's tolerance (``grader.tolerance``), and a function
``verificar(arquivo)`` that loads the student's file as the grader does (expression by expression), calls each
function on each case and says per test ok or what differs, in the student's language, and returns the verdicts
(a named logical vector, the grader's test names). The judging is ``r_selfcheck.R``'s, written once, as
``grader/functions/checks.py`` judges: dimensions, then each entry within the tolerance, a finite mask fill at or below
``checks.MASKED_AT`` counting as -Inf. ``python -m grader --template --language r --out FILE`` writes it beside
the starter file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from grader import rubric as rubric_mod
from grader import tolerance
from grader.functions.cases import all_cases
from grader.functions.checks import MASKED_AT, case_label
from grader.functions.contract import DEFAULT_SEED
from grader.messages import CATALOG, Message, text
from grader.sandbox.limits import Limits

FILE_NAME = "verificar.R"
SCRIPT = Path(__file__).with_name("r_selfcheck.R")  # the judging, in R
# The texts R words at run time (``verify.*`` in messages.toml), by the name the script asks for.
TEXTS = ("vector", "parse", "skipped", "error", "null", "not_matrix", "shape", "entries", "no_file", "missing",
         "passed", "failed", "summary", "case_one", "case_many")
NUMBERS_PER_LINE = 6


def command(file: str) -> str:
    """The R command that checks ``file`` (as the student named it) with verificar.R."""
    return f"source({_r_string(FILE_NAME)}); verificar({_r_string(file)})"


def _r_string(value: str) -> str:
    """An R string literal: JSON's escapes are R's (\\", \\\\, \\n, \\uXXXX)."""
    return json.dumps(value, ensure_ascii=False)


def _r_number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return repr(float(value))  # the shortest decimal that reads back as the same double


def _r_value(value, indent: str) -> str:
    """A case's argument or expected value as R code: a matrix (row by row), a list of them, n, causal."""
    if isinstance(value, (bool, np.bool_)):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, np.integer)):
        return f"{int(value)}L"
    if isinstance(value, (list, tuple)):
        return "list(" + ", ".join(_r_value(v, indent) for v in value) + ")"
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"a public case holds an array of {array.ndim} dimensions; verificar.R writes matrices")
    numbers = [_r_number(x) for x in array.ravel()]  # row by row: m() fills by row
    lines = [", ".join(numbers[i:i + NUMBERS_PER_LINE]) for i in range(0, len(numbers), NUMBERS_PER_LINE)]
    return f"m({array.shape[0]}L, {array.shape[1]}L, c(" + f",\n{indent}".join(lines) + "))"


def _case(case, lang: str) -> str:
    expected = case.reference_output()  # (n, ...) float64
    tol = tolerance.tolerance(case.function, case.args, case.kwargs, expected)
    pad = "      "
    fields = [f"teste = {_r_string(text(lang, f'test.{case.group}', function=case.function))}",
              f"f = {_r_string(case.function)}",
              f"rotulo = {_r_string(case_label(case).text(lang, 'r'))}",
              f"args = {_r_value(list(case.args), pad)}",
              f"causal = {_r_value(case.kwargs['causal'], pad) if 'causal' in case.kwargs else 'NULL'}",
              f"esperado = {_r_value(expected, pad)}",
              f"tol = {_r_number(tol)}"]
    return "    list(" + f",\n{pad}".join(fields) + ")"


def render(lang: str, seed: int = DEFAULT_SEED) -> str:
    """The whole verificar.R, in ``lang``: every public case of the default rubric's question 1 tests."""
    tests = {(function, group) for function, group, _ in rubric_mod.load().tests()}
    cases = [c for c in all_cases(seed) if (c.function, c.group) in tests]
    header = Message("verify.header", {"seed": seed, "command": command("student.R")}).text(lang)
    texts = ",\n".join(f"    {key} = {_r_string(CATALOG.entries['verify.' + key][lang])}" for key in TEXTS)
    parts = ["\n".join(f"# {line}".rstrip() for line in header.split("\n")), "",
             "verificar <- local({",
             "  m <- function(nrow, ncol, values) matrix(values, nrow = nrow, ncol = ncol, byrow = TRUE)",
             f"  textos <- list(\n{texts})",
             f"  decimal <- {_r_string(',' if lang == 'pt' else '.')}",
             f"  limite <- {_r_number(Limits().call_timeout)}",
             f"  mascara <- {_r_number(MASKED_AT)}",
             "  casos <- list(\n" + ",\n".join(_case(c, lang) for c in cases) + ")",
             "", SCRIPT.read_text(encoding="utf-8").rstrip("\n"), "})", ""]
    return "\n".join(parts)
