"""Every message of the grader's catalog, worded in Portuguese, reads as Portuguese.

Each key is worded with every placeholder set to a number (34.5), as the grader words it at the end. The
Portuguese text then holds no English word outside code (identifiers, calls, options, dtypes) and mistake ids,
writes numbers with one decimal mark (34,5; never 34.5), and names no sandbox path.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from grader.intake.explain import explain_error, hint, own_paths
from grader.messages import CATALOG, Message, text
from grader.results import NAMED_MISTAKES
from mha.messages import placeholders

NUMBER = 34.5  # no thousands: a point or a comma between digits can only be a decimal mark
# Words both languages write: code and technical names the course uses in Portuguese too, and words that
# are Portuguese as well as English. A word here is allowed in a pt text; any other word of the English
# texts found in a Portuguese one is a leftover.
SHARED = {
    "a", "o", "e", "de", "as", "no", "do", "com", "se", "um", "uma", "por", "para", "mas", "ou", "não", "só", "em",
    "me", "via", "total", "final", "ok", "batch", "softmax", "numpy", "torch", "float32", "float64", "float16",
    "python", "jupyter", "colab", "drive", "google", "gpu", "cuda", "cpu", "linux", "debian", "ubuntu", "bubblewrap",
    "namespaces", "setpriv", "util", "zip", "pipe", "fifo", "shell", "notebook", "utf", "toml", "json",
    "gradescope", "mha", "grader", "pip", "wheel", "bundle", "root", "uid", "mode", "trusted", "auto", "seed",
    "secret", "file", "module", "causal", "true", "false", "none", "eval", "dropout", "bias", "layernorm", "adam",
    "embedding", "logits", "forward", "tokens", "token", "lots", "lista", "mask", "inf", "gib", "mib", "bits",
    "abs", "max", "exp", "nan", "dim", "axis", "keepdims", "keepdim", "view", "transpose", "ids", "vocab",
    "block", "size", "model", "layers", "heads", "proj", "query", "key", "value", "attn", "d", "k", "n", "h", "b",
    "t", "c", "x", "s", "m", "i", "v", "q", "w", "worked", "hidden", "large", "options", "contract", "imports",
    "r", "base", "chunk", "visibility", "notebooks",
    "points", "functions", "function", "rubric", "template", "help", "links", "link", "usage", "error",
    "chmod", "rwx", "installs", "install", "kib", "multiheadattention", "build", "dropout_p", "training",
    "kernel", "tab", "tabs", "scaled", "dot", "product", "attention", "nn", "linear", "modulelist", "relu",
    "magics", "apt", "get", "is", "not", "allowed", "arrays", "autograder", "bytes", "define", "device", "diagonal",
    "editor", "else", "en", "pt", "float", "if", "kᵀ", "qᵀ", "matplotlib", "nanogpt", "pipes", "return", "use",
    "diag", "canvas", "moodle",
}


PYTHON_LITERAL = "else 0.0"  # code a student types (mistake.dropout-in-eval), written as Python writes it


def worded_pt() -> dict[str, str]:
    worded = {}
    for key, texts in CATALOG.entries.items():
        values = {name: NUMBER for name in placeholders(texts["en"])}
        worded[key] = Message(key, values).text("pt")
    return worded


CODE = re.compile(r"`[^`]*`|\S*[_=()\[\]{}./@:'\"<>*\\-]\S*|\b[A-Z]{2,}\w*\b|\b\w*\d\w*\b|−?inf\b")
WORD = re.compile(r"[^\W\d_]+")


def words(text_: str) -> set[str]:
    prose = CODE.sub(" ", text_)
    return {w.lower() for w in WORD.findall(prose)}


def english_vocabulary() -> set[str]:
    return set().union(*(words(texts["en"]) for texts in CATALOG.entries.values()))


def test_no_english_word_is_left_in_a_portuguese_message():
    english = english_vocabulary() - SHARED
    leftovers = {key: sorted(words(pt) & english) for key, pt in worded_pt().items()}
    leftovers = {key: found for key, found in leftovers.items() if found and not key.startswith("usage.bad_value")}
    assert leftovers == {}


def test_the_check_would_catch_an_english_word():
    english = english_vocabulary() - SHARED
    assert words("sua função lançou your erro") & english == {"your"}
    assert words("veja `causal=False` e W_Q") & english == set()


def test_every_number_in_a_portuguese_message_has_one_notation():
    for key, texts in CATALOG.entries.items():
        values = {name: NUMBER for name in placeholders(texts["en"])}
        pt, en = Message(key, values).text("pt"), Message(key, values).text("en")
        assert not re.search(r"\d\.\d", pt.replace(PYTHON_LITERAL, "")), (key, pt)
        assert not re.search(r"\d,\d", en), (key, en)
    en = Message("detail.entries_worked", {"wrong": 2, "total": 9, "entry": "(1,2)", "got": 4.0, "want": 2.8284271})
    pt = en.text("pt")
    assert "vale 4, mas o exemplo resolvido dá 2,828" in pt
    assert "is 4, but the worked example gives 2.828" in en.text("en")


def test_no_message_names_the_sandbox_path():
    assert not any("/tmp/work" in pt for pt in worded_pt().values())
    printed = "/tmp/work/student.py:17: RuntimeWarning: overflow encountered in exp\n  e = np.exp(S)\n"
    assert own_paths(printed, "atencao.py") == printed.replace("/tmp/work/student.py", "atencao.py")
    assert own_paths("/tmp/work/ajuda.py:3: UserWarning", "x.py") == "ajuda.py:3: UserWarning"
    assert own_paths(printed, "caderno.ipynb", lambda line: f"célula 2, linha {line - 10}").startswith(
        "caderno.ipynb, célula 2, linha 7: RuntimeWarning")


def test_every_mistake_is_shown_with_a_title_in_each_language():
    for mistake in NAMED_MISTAKES:
        pt, en = text("pt", f"mistake_title.{mistake}"), text("en", f"mistake_title.{mistake}")
        assert pt and en and pt != en and mistake not in pt


def test_status_words_are_translated():
    from grader.messages import status_word

    assert [status_word(s).text("pt") for s in ("graded", "refused", "import failed", "grader error")] == [
        "corrigida", "recusada", "importação falhou", "erro do corretor"]


def _raised(action) -> tuple[str, str]:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - the error itself is what is under test
        return type(exc).__name__, str(exc)
    raise AssertionError("it did not raise")


@pytest.mark.parametrize(("action", "key", "shapes"), [
    (lambda: np.ones((3, 4)) @ np.ones((3, 4)), "explain.matmul", ("4 columns", "3 rows")),
    (lambda: torch.ones(3, 4) @ torch.ones(3, 4), "explain.matmul_shapes", ("(3, 4)", "(3, 4)")),
    (lambda: np.ones((3, 4)) + np.ones((4, 3)), "explain.broadcast", ("(3, 4)", "(4, 3)")),
    (lambda: torch.ones(3, 4) + torch.ones(4, 3), "explain.broadcast_dim", ("dimension 1", "(4 and 3)")),
    (lambda: torch.ones(3, 3, dtype=torch.float64) @ torch.ones(3, 3), "explain.dtype", ("float64",)),
    (lambda: None @ np.ones(3), "explain.not_matrix", ("None",)),
    (lambda: torch.ones(3) @ None, "explain.none", ("return",)),
    (lambda: None.shape, "explain.none", ("return",)),
])
def test_numpy_and_torch_errors_are_explained_with_their_shapes(action, key, shapes):
    error_type, error = _raised(action)
    message = explain_error(error_type, error)
    assert message is not None and message.key == key, (error_type, error)
    assert all(s in message.text("en") for s in shapes), message.text("en")
    assert hint(error_type, error, ("numpy",)) == message  # the hint a failing call is given
    assert message.text("pt") != message.text("en")


def test_the_causal_false_note_goes_only_with_a_failure_it_explains():
    from grader.functions.cases import all_cases
    from grader.functions.checks import check
    from grader.rubric import Policy
    from grader.sandbox.limits import Limits
    from grader.sandbox.outcome import Outcome, Status
    from mha import reference

    case = max((c for c in all_cases() if c.function == "attention_weights" and c.kwargs.get("causal") is False),
               key=lambda c: c.args[0].shape[0])
    Q, K = case.args
    unscaled = reference.softmax(Q @ K.T)  # missing-scale, called with causal=False
    masked = reference.attention_weights(Q, K, causal=True)  # the mask applied although causal=False

    def notes(got):
        verdict = check(case, Outcome(Status.OK, value=np.asarray(got), dtype="float64"), Limits(), Policy())
        assert not verdict.passed
        return [n.key for n in verdict.notes]

    assert "note.not_causal" not in notes(unscaled)
    assert "note.not_causal" in notes(masked)


def test_a_notebook_line_for_jupyter_is_listed_once():
    import nbformat

    from grader.intake.notebooks import code_cells, python_cells

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("!pip install torch\nimport numpy as np"),
                                              nbformat.v4.new_code_cell("def softmax(S):\n    return S")])
    sources, _ = code_cells(nbformat.writes(notebook))
    _, notes = python_cells(sources, True, "notebook.ipynb", 200)
    (note,) = notes
    assert note.values["count"] == 1 and note.values["lines"] == "!pip install torch"
    assert "1 linha feita para o Jupyter ou o Colab foi pulada (!pip install torch)" in note.text("pt")


def test_gradescopes_folder_is_never_named_as_if_the_student_had_named_it(tmp_path):
    from grader.bundle import run_gradescope
    from grader.grade import GradeConfig

    folder = tmp_path / "submission"  # what Gradescope calls the folder it unpacks a hand-in into
    folder.mkdir()
    (folder / "notas.txt").write_text("sem código")
    results = tmp_path / "results.json"
    assert run_gradescope(folder, results, GradeConfig(lang="pt")) is None
    output = json.loads(results.read_text())["output"]
    assert "Sua entrega não tem nenhum arquivo .py, .ipynb" in output and "submission" not in output


@pytest.mark.parametrize("command", ["", "grade", "class", "template", "class-page", "bundle", "secret", "gradescope"])
def test_help_is_in_the_language_asked_for(command, capsys):
    from grader import cli

    for lang, usage, options in (("pt", "uso:", "opções:"), ("en", "usage:", "options:")):
        with pytest.raises(SystemExit):
            cli.run([command, "--help", "--lang", lang] if command else ["--help", "--lang", lang])
        shown = capsys.readouterr().out
        assert shown.startswith(usage) and options in shown, shown
    english = english_vocabulary() - SHARED
    with pytest.raises(SystemExit):
        cli.run([command, "--help", "--lang", "pt"] if command else ["--help", "--lang", "pt"])
    usage, rest = capsys.readouterr().out.split("\n\n", 1)
    code = {w.lower() for w in WORD.findall(usage)}  # the options' and arguments' own names, as typed
    assert words(rest) & english - code == set()


def test_the_starter_files_show_the_command_in_their_language_with_the_docs_file_names():
    from grader import template

    assert "    python -m grader student.py --lang pt\n" in template.render("pt")
    assert "    python -m grader student.py --lang en\n" in template.render("en")
    assert "    python -m grader modulo.py --lang pt\n" in template.render("pt", "module")
    assert "    python -m grader module.py --lang en\n" in template.render("en", "module")
    docs = (Path(__file__).resolve().parents[2] / "docs" / "students.md").read_text()
    assert "--contract module --lang pt > modulo.py" in docs and "--contract module --lang en > module.py" in docs
