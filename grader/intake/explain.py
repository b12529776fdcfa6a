"""The hint a stuck student can act on, for each way their code fails to load (or fails the same way in a call).

Judging stays in keys and values: ``hint`` looks at the error's type and text (as the sandbox reported
them) and returns a ``Message`` or None; the wording is in ``grader/messages.toml``.
"""

from __future__ import annotations

import re

from grader.messages import Message

_NO_MODULE = re.compile(r"No module named '([^'.]+)")
_CUDA = re.compile(r"CUDA|NVIDIA driver|cuda", re.IGNORECASE)
COLAB_MODULES = ("google", "google.colab")
# torch writes these itself when the sandbox hides /proc/cpuinfo: never the student's output
TORCH_NOISE = re.compile(r"^(\[W[^\]]*\] )?Error in cpuinfo:.*$|^Warning: .*cpuinfo.*$", re.MULTILINE)


def missing_module(error: str) -> str | None:
    found = _NO_MODULE.search(error)
    return found.group(1) if found else None


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
        return Message("hint.module", {"module": module, "allowed": ", ".join(allowed)})
    if _CUDA.search(error) and error_type in ("AssertionError", "RuntimeError", "AcceleratorError"):
        return Message("hint.cuda")
    if error_type == "EOFError":
        return Message("hint.input")
    if error_type == "FileNotFoundError":
        return Message("hint.data_file")
    if error_type == "TabError":
        return Message("hint.tab")
    return None


def without_noise(output: str) -> str:
    """What a submission printed, less the lines torch prints on its own in the sandbox."""
    return TORCH_NOISE.sub("", output).strip("\n") if "cpuinfo" in output else output
