"""The R class two suites read, built here and graded once per run (tests/grader/conftest.py: graded_r_class):

- sandbox/test_r_language.py's: every R file of the R corpus, its shapes (R Markdown, Quarto, an IRkernel notebook,
  a folder that source()s a helper, Moodle's and Canvas's layouts, a zip, CRLF and cp1252) and the Python twins
  of its mistakes;
- module/test_attribution.py's: each R idiom and each mistake of the R corpus beside its Python twin
  (``r_NAME.R``, ``py_NAME.py``), and the idioms written right.

Each student is graded on its own, so the two never read each other's rows; graded together they cost one batch.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

from ..conftest import CORPORA, SUBMISSIONS

R_CORPUS = CORPORA / "r_corpus"
SHAPES = R_CORPUS / "shapes"
IDIOMS = CORPORA / "r_idioms"

# --------------------------------------------------------------------------- sandbox/test_r_language.py's
MISTAKES = ("softmax-transposed", "loop-skips-last-row", "elementwise-product", "scores-crossprod",
            "mask-excludes-diagonal", "softmax-wrong-axis", "concat-wrong-axis", "heads-concat-order")
MOODLE = "Ana Souza_4242_assignsubmission_file_"  # Moodle's folder for one student's file hand-in


def _stem(mistake: str) -> str:
    return "mistake_" + mistake.replace("-", "_")


def _encodings(folder: Path) -> None:
    """The correct Portuguese file as Windows editors save it: CRLF, and cp1252 (its accents not UTF-8)."""
    text = (R_CORPUS / "correct_portuguese.R").read_text(encoding="utf-8")
    (folder / "crlf.R").write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    (folder / "cp1252.R").write_bytes(text.encode("cp1252"))


def add_mixed(folder: Path) -> None:
    """Every R file of the corpus, its shapes and the Python twins of its mistakes."""
    for path in R_CORPUS.glob("*.R"):
        shutil.copy(path, folder / path.name)
    for path in SHAPES.iterdir():
        if path.is_file():
            shutil.copy(path, folder / path.name)
    shutil.copytree(SHAPES / "folder", folder / "with_helper")
    moodle = folder / MOODLE
    moodle.mkdir()
    shutil.copy(R_CORPUS / "correct_matrix.R", moodle / "atencao.R")
    shutil.copy(SHAPES / "report.Rmd", folder / "souzaana_12345_67890_relatorio.Rmd")  # Canvas's layout
    with zipfile.ZipFile(folder / "zipped.zip", "w") as zf:  # a folder zipped with its helper
        for path in (SHAPES / "folder").iterdir():
            zf.write(path, f"entrega/{path.name}")
    _encodings(folder)
    for mistake in MISTAKES:
        shutil.copy(SUBMISSIONS / f"{_stem(mistake)}.py", folder / f"py_{_stem(mistake)}.py")
    shutil.copy(SUBMISSIONS / "correct_numpy.py", folder / "py_correct.py")


# ------------------------------------------------------------------------- module/test_attribution.py's
HEADER = re.compile(r"^# (?:Mistake \[(?P<mistake>[a-z-]+)\] in|Error in) (?P<function>\w+):")
# Each R file and its Python twin: the idioms', then the project's R corpus's mistakes with theirs.
TWINS = {**{f"idiom_{p.stem}": (p, p.with_suffix(".py")) for p in sorted(IDIOMS.glob("*.R")) if HEADER.match(
    p.read_text())},
         **{f"corpus_{p.stem}": (p, SUBMISSIONS / f"{p.stem}.py") for p in sorted(R_CORPUS.glob("mistake_*.R"))}}
CORRECT = sorted(p.stem for p in IDIOMS.glob("correct_*.R"))


def add_twins(folder: Path) -> None:
    """Every R file of both corpora beside its twin, and the idioms written right."""
    for name, (r_file, py_file) in TWINS.items():
        shutil.copy(r_file, folder / f"r_{name}.R")
        shutil.copy(py_file, folder / f"py_{name}.py")
    for name in CORRECT:
        shutil.copy(IDIOMS / f"{name}.R", folder / f"{name}.R")


def build(folder: Path) -> None:
    add_mixed(folder)
    add_twins(folder)
