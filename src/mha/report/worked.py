"""The worked example as the course develops it: inputs, then per head steps 1)-5), then 6)-7).

Reads the verify_example stage's record (mha.artifacts.worked) and lays each computed matrix beside its
published counterpart with the stage's own verdict and deviation.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from mha.artifacts.worked import WorkedExampleRecord
from mha.report.messages import Messages
from mha.report.tables import matrix_table
from mha.worked_example import published_name


@dataclass(frozen=True)
class StepVerdict:
    passed: bool
    text: str


@dataclass(frozen=True)
class Step:
    title: str
    computed: Markup
    published: Markup | None = None
    check: StepVerdict | None = None


@dataclass(frozen=True)
class Block:
    heading: str
    steps: list[Step]


def dims(count: int) -> list[str]:
    return [str(i) for i in range(1, count + 1)]


def build(record: WorkedExampleRecord, t: Messages) -> list[Block]:
    tokens = record.tokens

    def compared(title: str, name: str, columns: list[str]) -> Step:
        """The check named ``name``: the computed matrix beside the published one, with the stage's verdict."""
        check = record.checks[name]
        deviation = t.scientific(check.max_abs_deviation)
        verdict = StepVerdict(check.passed, t("check_pass", deviation=deviation) if check.passed
                        else t("check_fail", deviation=deviation, tolerance=t.number(record.published_tolerance)))
        return Step(title, matrix_table(check.computed, tokens, columns, t),
                    matrix_table(check.published, tokens, columns, t, decimals=3), verdict)

    inputs = record.inputs
    d_model = len(inputs.X[0])
    input_steps = [Step("X", matrix_table(inputs.X, tokens, dims(d_model), t))]
    for h, (wq, wk, wv) in enumerate(zip(inputs.W_Q, inputs.W_K, inputs.W_V, strict=True), start=1):
        for name, w in (("W_Q", wq), ("W_K", wk), ("W_V", wv)):
            input_steps.append(Step(f"{name} ({t('head_heading', head=h)})",
                                    matrix_table(w, dims(len(w)), dims(len(w[0])), t)))
    input_steps.append(Step("W_O", matrix_table(inputs.W_O, dims(len(inputs.W_O)), dims(len(inputs.W_O[0])), t)))
    blocks = [Block(t("inputs_heading"), input_steps)]

    for h, head in enumerate(record.heads, start=1):
        d_k = len(head.Q[0])
        blocks.append(Block(t("head_heading", head=h), [
            compared(t("step_Q"), published_name(h, "Q"), dims(d_k)),
            compared(t("step_K"), published_name(h, "K"), dims(d_k)),
            compared(t("step_V"), published_name(h, "V"), dims(len(head.V[0]))),
            Step(t("step_S"), matrix_table(head.S, tokens, tokens, t)),
            compared(t("step_S_scaled"), published_name(h, "S_times_sqrt_dk"), tokens),
            Step(t("step_M"), matrix_table(head.M, tokens, tokens, t)),
            Step(t("step_SM"), matrix_table(head.S_masked, tokens, tokens, t)),
            compared(t("step_A"), published_name(h, "A"), tokens),
            compared(t("step_head_output"), published_name(h, "output"), dims(len(head.output[0]))),
        ]))

    blocks.append(Block(t("concat_heading"), [
        Step(t("step_concat"), matrix_table(record.concat, tokens, dims(len(record.concat[0])), t)),
        compared(t("step_output"), published_name(None, "output"), dims(len(record.output[0]))),
    ]))
    return blocks
