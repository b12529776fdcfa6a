"""Question 2: a PyTorch attention module (and optionally a whole model), graded in the same sandbox.

``contract`` says what a submission defines; ``harness`` is the driver that runs beside it in the sandbox
(build, load, call, answer raw numbers); ``wire`` reads those answers as hostile data; ``runner`` makes the calls
into the driver; ``layouts`` gives the candidate placements of the course's weights in the student's parameters
(one ``Layout`` object per layout); ``cases`` are the inputs and weights; ``checks`` (the module) and
``model_checks`` (the whole model) judge, each check into a ``verdict``; ``variants`` holds the module's mistakes
as code, and ``diagnosis`` names them from the evidence the checks leave (``text``: the model's training text);
``run`` grades one submission (question 1's ``attribution`` is in ``grader.functions``).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def harness_sources() -> dict[str, str]:
    """What the sandbox runs beside every submission: the module driver only. Nothing of the reference, the
    cases or the checks goes with it (attribution asks the grader for a helper's value instead)."""
    harness = resources.files("grader.module").joinpath("harness.py").read_text(encoding="utf-8")
    return {"harness": harness}
