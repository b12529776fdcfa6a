"""The report's tables, built as pandas DataFrames of already-formatted strings and rendered with to_html.

Cells are formatted here (not by pandas) so that each language gets its own decimal separator; pandas
escapes every cell, and the row labels become <th> so that screen readers announce them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
from markupsafe import Markup

from mha.report.heads import HeadStats
from mha.report.messages import Messages

if TYPE_CHECKING:  # for annotations only: the lab page uses this module without the report's inputs
    from mha.report.baselines import Baselines
    from mha.report.inputs import Run

DASH = "—"


def to_html(frame: pd.DataFrame, css_class: str, index: bool = True, corner: str | None = None) -> Markup:
    """``corner`` heads the column of row labels (pandas prints the columns' name there)."""
    frame.columns.name = corner
    # pandas escapes the cells and labels (escape=True); the result is therefore safe to insert as is.
    return Markup(frame.to_html(border=0, classes=css_class, escape=True, index=index, na_rep=DASH))


def answer_table(attention: Run, no_attention: Run, baselines: Baselines, t: Messages) -> Markup:
    a, n = attention.results, no_attention.results
    rows = {
        t("model_attention"): (a.best_val_loss, a.final_val_loss, a.final_train_loss),
        t("model_no_attention"): (n.best_val_loss, n.final_val_loss, n.final_train_loss),
        t("gap"): (n.best_val_loss - a.best_val_loss, n.final_val_loss - a.final_val_loss,
                   n.final_train_loss - a.final_train_loss),
        t("baseline_unigram"): (baselines.unigram, baselines.unigram, None),
        t("baseline_bigram"): (baselines.bigram, baselines.bigram, None),
    }
    columns = [t("col_best_val"), t("col_final_val"), t("col_final_train")]
    cells = [[DASH if v is None else t.number(v) for v in values] for values in rows.values()]
    return to_html(pd.DataFrame(cells, index=list(rows), columns=columns), "num answer")


def training_table(attention: Run, no_attention: Run, t: Messages) -> Markup:
    """How long each run trained, in steps and tokens (its time and speed are the machine's: mha.artifacts.runlog)."""
    columns = [t("col_iterations"), t("col_tokens_seen")]
    cells = [[t.integer(r.iterations), t.integer(r.tokens_seen)] for r in (attention.results, no_attention.results)]
    return to_html(pd.DataFrame(cells, index=[t("model_attention"), t("model_no_attention")], columns=columns), "num")


def matrix_cell(value: float | None, t: Messages, decimals: int) -> str:
    if value is None or (isinstance(value, float) and math.isinf(value) and value < 0):
        return "−∞"  # the artifact stores −inf as null: JSON has no infinity
    return t.number(value + 0.0, decimals)  # + 0.0 turns -0.0 into 0.0


def matrix_table(matrix: Sequence[Sequence[float | None]], rows: list[str], columns: list[str], t: Messages,
                 decimals: int = 4) -> Markup:
    """A matrix with labelled rows and columns; integer matrices (the course's inputs, Q, K, V, S·√d_k,
    up to rounding) print without decimals, any other with ``decimals`` in every cell."""
    finite = [v for row in matrix for v in row if v is not None and math.isfinite(v)]
    if all(abs(v - round(v)) < 1e-9 for v in finite):
        decimals = 0
    cells = [[matrix_cell(v, t, decimals) for v in row] for row in matrix]
    return to_html(pd.DataFrame(cells, index=rows, columns=columns), "num matrix")


def agreement_table(implementations: dict[str, float], tolerance: float, t: Messages) -> Markup:
    cells = [
        [t.scientific(d), t.scientific(tolerance), "✓" if d <= tolerance else "✗"]
        for d in implementations.values()
    ]
    columns = [t("col_max_difference"), t("col_tolerance"), t("col_result")]
    return to_html(pd.DataFrame(cells, index=list(implementations), columns=columns), "num",
                   corner=t("col_implementation"))


def head_stats_table(stats: list[HeadStats], t: Messages) -> Markup:
    columns = [t("col_layer"), t("col_head"), t("col_mean_distance"), t("col_previous_share"),
               t("col_self_share"), t("col_effective_keys"), t("col_above_diagonal")]
    cells = [
        [str(s.layer), str(s.head), t.number(s.mean_distance, 2), t.percent(s.previous_share, 1),
         t.percent(s.self_share, 1), t.number(s.effective_keys, 2), t.number(s.above_diagonal, 4)]
        for s in stats
    ]
    return to_html(pd.DataFrame(cells, columns=columns), "num", index=False)


def flatten(config: Any, prefix: str = "") -> dict[str, Any]:
    """{'model': {'n_head': 2}} -> {'model.n_head': 2}; lists and scalars are leaves."""
    if isinstance(config, dict):
        flat: dict[str, Any] = {}
        for key in sorted(config):
            flat.update(flatten(config[key], f"{prefix}{key}."))
        return flat
    return {prefix[:-1]: config}


def config_value(value: Any, t: Messages) -> str:
    if value is None:  # a setting that does not apply to this run (the kernel of a model without attention)
        return t("not_applicable")
    if isinstance(value, bool):
        return t("yes") if value else t("no")
    if isinstance(value, float):
        return t.exact(value)  # as configured; a config value is not a measurement to round
    if isinstance(value, str):
        return repr(value) if value != value.strip() or "\n" in value else value
    return str(value)


def config_table(attention: dict, no_attention: dict, t: Messages) -> Markup:
    """The two resolved configs side by side, one row per setting; a setting one run lacks shows a dash."""
    a, n = flatten(attention), flatten(no_attention)
    keys = sorted(a.keys() | n.keys())
    cells = [[config_value(a[k], t) if k in a else DASH, config_value(n[k], t) if k in n else DASH] for k in keys]
    frame = pd.DataFrame(cells, index=keys, columns=[t("model_attention"), t("model_no_attention")])
    return to_html(frame, "config", corner=t("col_setting"))


def counts_table(attention: Run, no_attention: Run, t: Messages) -> Markup:
    cells = [[t.integer(attention.results.parameters)], [t.integer(no_attention.results.parameters)]]
    frame = pd.DataFrame(cells, index=[t("model_attention"), t("model_no_attention")], columns=[t("col_parameters")])
    return to_html(frame, "num")


def facts_table(rows: dict[str, str], t: Messages) -> Markup:
    return to_html(pd.DataFrame([[v] for v in rows.values()], index=list(rows), columns=[t("col_value")]), "facts")


def baselines_facts(baselines: Baselines, t: Messages) -> dict[str, str]:
    return {
        "train_chars": t.integer(baselines.train_chars),
        "val_chars": t.integer(baselines.val_chars),
        "vocab_size": t.integer(baselines.vocab_size),
        "add_k": t.number(baselines.add_k, 2),
    }
