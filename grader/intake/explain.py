"""The hint a stuck student can act on, for each way their code fails to load (or fails the same way in a call).

Judging stays in keys and values: ``hint`` looks at the error's type and text (as the sandbox reported
them) and returns a ``Message`` or None; the wording is in ``grader/messages.toml``.
"""

from __future__ import annotations

import importlib.machinery
import os
import re
import sys

from grader.messages import Message

_NO_MODULE = re.compile(r"No module named '([^'.]+)")
_CUDA = re.compile(r"CUDA|NVIDIA driver|cuda", re.IGNORECASE)
COLAB_MODULES = ("google", "google.colab")
# torch writes these itself when the sandbox hides /proc/cpuinfo: never the student's output
TORCH_NOISE = re.compile(r"^(\[W[^\]]*\] )?Error in cpuinfo:.*$|^Warning: .*cpuinfo.*$", re.MULTILINE)


def missing_module(error: str) -> str | None:
    found = _NO_MODULE.search(error)
    return found.group(1) if found else None


# numpy's and torch's own words for the errors students hit most, and what each means for the shapes
_NP_MATMUL = re.compile(r"matmul: Input operand 1 has a mismatch in its core dimension 0.*\(size (\d+) is different "
                        r"from (\d+)\)")
_TORCH_MATMUL = re.compile(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")
_TORCH_MATMUL_1D = re.compile(r"size mismatch, got input \((\d+)\), mat \((\d+)x(\d+)\)")
_NP_BROADCAST = re.compile(r"operands could not be broadcast together with shapes (\([\d,]*\)) (\([\d,]*\))")
_TORCH_BROADCAST = re.compile(r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at "
                              r"non-singleton dimension (\d+)")
_DTYPE = re.compile(r"expected (?:scalar type|m1 and m2 to have the same dtype)|Found dtype \w+ but expected "
                    r"|result type Float can't be cast|expected both vectors to have same dtype")
_NONE = re.compile(r"'NoneType'|NoneType object")
_NP_NOT_MATRIX = re.compile(r"matmul: Input operand \d does not have enough dimensions \(has 0")


def _shape(text: str) -> str:
    return "(" + ", ".join(text.strip("()").split(",")).strip(", ") + ")"


def explain_error(error_type: str, error: str) -> Message | None:
    """A sentence for numpy's or torch's own complaint about shapes, dtypes or a None, naming the sizes it
    reports and what to check; None when the error is none of these."""
    if found := _NP_MATMUL.search(error):
        return Message("explain.matmul", {"left": found[2], "right": found[1]})
    if found := _TORCH_MATMUL.search(error):
        return Message("explain.matmul_shapes", {"left": f"({found[1]}, {found[2]})",
                                                 "right": f"({found[3]}, {found[4]})"})
    if found := _TORCH_MATMUL_1D.search(error):
        return Message("explain.matmul_shapes", {"left": f"({found[1]},)", "right": f"({found[2]}, {found[3]})"})
    if found := _NP_BROADCAST.search(error):
        return Message("explain.broadcast", {"left": _shape(found[1]), "right": _shape(found[2])})
    if found := _TORCH_BROADCAST.search(error):
        return Message("explain.broadcast_dim", {"left": found[1], "right": found[2], "dim": found[3]})
    if _NP_NOT_MATRIX.search(error):
        return Message("explain.not_matrix")
    if _DTYPE.search(error):
        return Message("explain.dtype")
    if error_type in ("TypeError", "AttributeError") and _NONE.search(error):
        return Message("explain.none")
    return None


def _a_package(module: str) -> bool:
    """Whether ``module`` names a package installed where the grader runs (scipy, pandas), by looking it up on
    the path without importing it; the current folder left out (``python -m grader`` puts it first, and a
    student's own utils.py there is no package)."""
    if not module.isidentifier():
        return False
    here = os.getcwd()
    path = [p for p in sys.path if p and os.path.abspath(p) != here]
    try:
        return importlib.machinery.PathFinder.find_spec(module, path) is not None
    except (ImportError, ValueError, OSError):
        return False


def hint(error_type: str, error: str, allowed: tuple[str, ...]) -> Message | None:
    """The hint for an error a submission raised, or None when Python's own message says enough."""
    if error_type.startswith("R."):  # R's condition classes, as grader/sandbox/r_runner.R names them
        from grader.intake import r_source

        return r_source.hint(error)
    if error_type == "ImportError" and "belongs to the grader" in error:
        return Message("load.grader_import")
    module = missing_module(error) if error_type in ("ModuleNotFoundError", "ImportError") else None
    if module == "google":
        return Message("hint.colab")
    if module in ("grader", "mha"):
        return Message("load.grader_import")
    if module is not None:
        # No package by that name where the grader runs either: most likely a file of the student's own that did
        # not come with the hand-in (from utils import f), and the hint says how to hand it in.
        key = "hint.module" if _a_package(module) else "hint.module_file"
        return Message(key, {"module": module, "allowed": ", ".join(allowed)})
    if _CUDA.search(error) and error_type in ("AssertionError", "RuntimeError", "AcceleratorError"):
        return Message("hint.cuda")
    if error_type == "EOFError":
        return Message("hint.input")
    if error_type == "FileNotFoundError":
        return Message("hint.data_file")
    if error_type == "TabError":
        return Message("hint.tab")
    return explain_error(error_type, error)


# Where the sandbox puts the graded file (and the student's helper modules), as Python names them in a
# warning or a traceback the student's code printed: never shown, the student's own file name is.
_SANDBOX_FILE = re.compile(r"(?:/[\w.-]+)*/tmp/work/student\.py(?::(\d+))?|(?:/[\w.-]+)*/tmp/work/(?=[\w-]+\.py\b)")


def own_paths(output: str, name: str, place=None) -> str:
    """What a submission printed, with the sandbox's path of its file replaced by the file's own name;
    ``place(line)``, when given, words a line of the graded file as the student sees it (a notebook's cell)."""
    def replaced(found: re.Match) -> str:
        if not found.group(0).startswith("/") or "student.py" not in found.group(0):
            return ""  # a helper module's folder: its own name follows
        line = found.group(1)
        if line is None:
            return name
        return f"{name}, {place(int(line))}" if place is not None else f"{name}:{line}"

    return _SANDBOX_FILE.sub(replaced, output)


def without_noise(output: str) -> str:
    """What a submission printed, less the lines torch prints on its own in the sandbox."""
    return TORCH_NOISE.sub("", output).strip("\n") if "cpuinfo" in output else output
