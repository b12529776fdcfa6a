"""The worked example as the course develops it: inputs, then per head steps 1)-5), then 6)-7).

Reads the verify_example stage's matrices (schema: mha.verify.VerificationResult.matrices()) and lays
each computed matrix beside its published counterpart with the stage's own verdict and deviation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from markupsafe import Markup

from mha.report.messages import Messages
from mha.report.tables import matrix_table
from mha.worked_example import published_name


@dataclass(frozen=True)
class Check:
    passed: bool
    text: str


@dataclass(frozen=True)
class Step:
    title: str
    computed: Markup
    published: Markup | None = None
    check: Check | None = None


@dataclass(frozen=True)
class Block:
    heading: str
    steps: list[Step]


def dims(count: int) -> list[str]:
    return [str(i) for i in range(1, count + 1)]


def build(matrices: dict, t: Messages) -> list[Block]:
    tokens = list(matrices["tokens"])
    comparisons, published = matrices["comparisons"], matrices["published"]
    tolerance = matrices["published_tolerance"]

    def compared(title: str, computed, name: str, columns: list[str], scale: float = 1.0) -> Step:
        """A computed matrix beside the published one named ``name``, with the verify stage's verdict."""
        shown = [[v * scale for v in row] for row in computed]
        verdict = comparisons[name]
        key = "check_pass" if verdict["pass"] else "check_fail"
        check = Check(verdict["pass"], t(key, deviation=t.scientific(verdict["max_abs_deviation"]),
                                         tolerance=t.number(tolerance)))
        return Step(title, matrix_table(shown, tokens, columns, t),
                    matrix_table(published[name], tokens, columns, t, decimals=3), check)

    inputs = matrices["inputs"]
    d_model = len(inputs["X"][0])
    input_steps = [Step("X", matrix_table(inputs["X"], tokens, dims(d_model), t))]
    for h, (wq, wk, wv) in enumerate(zip(inputs["W_Q"], inputs["W_K"], inputs["W_V"], strict=True), start=1):
        for name, w in (("W_Q", wq), ("W_K", wk), ("W_V", wv)):
            input_steps.append(Step(f"{name} ({t('head_heading', head=h)})",
                                    matrix_table(w, dims(len(w)), dims(len(w[0])), t)))
    W_O = inputs["W_O"]
    input_steps.append(Step("W_O", matrix_table(W_O, dims(len(W_O)), dims(len(W_O[0])), t)))
    blocks = [Block(t("inputs_heading"), input_steps)]

    for h, head in enumerate(matrices["heads"], start=1):
        d_k = len(head["Q"][0])
        blocks.append(Block(t("head_heading", head=h), [
            compared(t("step_Q"), head["Q"], published_name(h, "Q"), dims(d_k)),
            compared(t("step_K"), head["K"], published_name(h, "K"), dims(d_k)),
            compared(t("step_V"), head["V"], published_name(h, "V"), dims(len(head["V"][0]))),
            Step(t("step_S"), matrix_table(head["S"], tokens, tokens, t)),
            compared(t("step_S_scaled"), head["S"], published_name(h, "S_times_sqrt_dk"), tokens,
                     scale=math.sqrt(d_k)),
            Step(t("step_M"), matrix_table(head["M"], tokens, tokens, t)),
            Step(t("step_SM"), matrix_table(head["S_masked"], tokens, tokens, t)),
            compared(t("step_A"), head["A"], published_name(h, "A"), tokens),
            compared(t("step_head_output"), head["output"], published_name(h, "output"),
                     dims(len(head["output"][0]))),
        ]))

    blocks.append(Block(t("concat_heading"), [
        Step(t("step_concat"), matrix_table(matrices["concat"], tokens, dims(len(matrices["concat"][0])), t)),
        compared(t("step_output"), matrices["output"], published_name(None, "output"),
                 dims(len(matrices["output"][0]))),
    ]))
    return blocks
