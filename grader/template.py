"""The starter file students fill in: ``python -m grader --template > student.py`` (``--language r``: student.R,
in R's notation, with ``verificar.R`` beside it: ``grader.r_selfcheck``)."""

from __future__ import annotations

import inspect
import shlex

from grader import r_selfcheck
from grader.functions.contract import FUNCTIONS
from grader.messages import Message, text
from mha import reference


def _parameters(function) -> str:
    """The reference's parameter list, as a student writes it: names and defaults, no annotations."""
    signature = inspect.signature(function)
    bare = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return str(signature.replace(parameters=bare, return_annotation=inspect.Signature.empty))[1:-1]


# What each function of the starter file takes: exactly what the reference takes.
SIGNATURES = {function: _parameters(getattr(reference, function)) for function in FUNCTIONS}


def _docstring(body: str, indent: str) -> str:
    lines = body.split("\n")
    inner = "\n".join((indent + line) if line else "" for line in lines[1:])
    return f'{indent}"""{lines[0]}' + (f"\n{inner}\n{indent}" if len(lines) > 1 else "") + '"""'


# The file each question is saved as in docs/students.md, per language (question 2's is named in the language)
FILE_NAMES = {"functions": {"pt": "student.py", "en": "student.py"}, "module": {"pt": "modulo.py", "en": "module.py"}}
R_FILE_NAME = "student.R"  # question 1's R starter, as docs/students.md saves it
LANGUAGES = ("python", "r")  # a starter's language (r: question 1 in base R)


def check_command(file: str, lang: str) -> str:
    """How a student runs the grader on their own ``file`` with the public cases, in ``lang``."""
    return f"python -m grader {shlex.quote(file)} --lang {lang}"


def r_check_command(file: str) -> str:
    """How an R student checks their own ``file`` in R alone, with verificar.R."""
    return r_selfcheck.command(file)


def command(lang: str, contract: str = "functions") -> str:
    """How the student runs the grader on the file, as the docs save it, in the language it was made in."""
    return check_command(FILE_NAMES[contract][lang], lang)


def render(lang: str, contract: str = "functions") -> str:
    """The whole starter file, its docstrings in ``lang``; every body raises NotImplementedError."""
    if contract == "module":
        return render_module(lang)
    header = text(lang, "template.header", command=command(lang))
    parts = [_docstring(header, ""), "", "import numpy as np  # noqa: F401", ""]
    for function in FUNCTIONS:
        parts += ["", f"def {function}({SIGNATURES[function]}):",
                  _docstring(text(lang, f"template.{function}"), "    "),
                  "    raise NotImplementedError", ""]
    return "\n".join(parts)


def render_module(lang: str) -> str:
    """Question 2's starter file: the MultiHeadAttention class and the optional build_model."""
    parts = [_docstring(text(lang, "template.module_header", command=command(lang, "module")), ""), "",
             "import torch  # noqa: F401", "import torch.nn as nn", "import torch.nn.functional as F  # noqa: F401",
             "", "", "class MultiHeadAttention(nn.Module):",
             _docstring(text(lang, "template.module_class"), "    "), "",
             "    def __init__(self, d_model, n_heads, dropout=0.0, block_size=128):",
             "        super().__init__()", "        raise NotImplementedError", "",
             "    def forward(self, x):",
             _docstring(text(lang, "template.module_forward"), "        "),
             "        raise NotImplementedError", "", "",
             "def build_model(vocab_size, block_size):",
             _docstring(text(lang, "template.build_model"), "    "),
             "    raise NotImplementedError", ""]
    return "\n".join(parts)


def _r_parameters(function: str) -> str:
    """The reference's parameter list in R's spelling: ``causal = TRUE``."""
    return SIGNATURES[function].replace("=True", " = TRUE").replace("=False", " = FALSE")


def _roxygen(body: str) -> str:
    return "\n".join(f"#' {line}".rstrip() for line in body.split("\n"))


def render_r(lang: str) -> str:
    """Question 1's starter file in R: roxygen comments in ``lang``, in R's notation (``template_r.*``); every body
    stops with "not implemented"."""
    header = text(lang, "template.r_header", check=r_check_command(R_FILE_NAME),
                  command=check_command(R_FILE_NAME, lang))
    parts = [_roxygen(header), ""]
    stop = text(lang, "template.r_not_implemented")
    for function in FUNCTIONS:
        parts += ["", _roxygen(Message(f"template.{function}").text(lang, "r")),
                  f"{function} <- function({_r_parameters(function)}) {{", f'  stop("{stop}")', "}", ""]
    return "\n".join(parts)
