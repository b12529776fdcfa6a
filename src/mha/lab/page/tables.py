"""The lab page's tables: cells formatted here per language, rendered by the report's helper
(mha.report.tables.to_html: escaped, row labels as <th>)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from markupsafe import Markup

from mha.lab.cost import AttentionCost
from mha.lab.page.findings import HeadsFindings, PositionsFindings, Spread, TrainedScaleFindings
from mha.lab.page.roles import Model, differences
from mha.lab.scale import ScaleStatistics
from mha.report.messages import Messages
from mha.report.tables import to_html


def scale_table(stats: ScaleStatistics, t: Messages) -> Markup:
    u, s = stats.unscaled, stats.scaled
    columns = [t("lab_col_variance"), t("lab_col_standard_error"), t("lab_col_variance_ratio"),
               t("lab_col_scaled_variance"), t("lab_col_weight_unscaled"), t("lab_col_weight_scaled"),
               t("lab_col_entropy_unscaled"), t("lab_col_entropy_scaled"), t("lab_col_jacobian_unscaled"),
               t("lab_col_jacobian_scaled")]
    cells = [
        [t.number(stats.score_variance[i], 2), t.number(stats.score_variance_standard_error[i], 2),
         t.number(stats.score_variance[i] / d, 3), t.number(stats.scaled_score_variance[i], 3),
         t.number(u.largest_weight[i], 3), t.number(s.largest_weight[i], 3), t.number(u.entropy[i], 3),
         t.number(s.entropy[i], 3), t.number(u.jacobian_spectral_norm[i], 4), t.number(s.jacobian_spectral_norm[i], 4)]
        for i, d in enumerate(stats.d_k)
    ]
    return to_html(pd.DataFrame(cells, index=[str(d) for d in stats.d_k], columns=columns), "num", corner="d_k")


def mean_sd(value: Spread, t: Messages, digits: int = 4, signed: bool = False) -> str:
    """'1.5234 ± 0.0041': the mean over seeds ± their standard deviation."""
    return f"{t.number(value.mean, digits, signed=signed)} ± {t.number(value.sd, digits)}"


def trained_scale_table(s: TrainedScaleFindings, t: Messages) -> Markup:
    columns = ["d_k", t("col_best_val"), t("lab_col_attention_entropy")]
    cells = [[str(s.d_k), mean_sd(s.scaled_best, t), mean_sd(s.scaled_entropy, t, 3)],
             [str(s.d_k), mean_sd(s.unscaled_best, t), mean_sd(s.unscaled_entropy, t, 3)]]
    return to_html(pd.DataFrame(cells, index=[t("lab_legend_scaled"), t("lab_legend_unscaled")], columns=columns),
                   "num")


def heads_table(h: HeadsFindings, t: Messages) -> Markup:
    columns = ["d_k", t("col_best_val"), t("lab_col_versus_reference"), t("col_parameters")]
    cells = [[str(r.d_k), mean_sd(r.best_val_loss, t),
              t.number(r.best_val_loss.mean - h.reference.best_val_loss.mean, signed=True),
              t.integer(r.parameters)] for r in h.runs]
    return to_html(pd.DataFrame(cells, index=[str(r.n_head) for r in h.runs], columns=columns), "num",
                   corner="n_head")


def head_kinds_table(h: HeadsFindings, t: Messages) -> Markup:
    columns = [t("lab_col_heads_previous"), t("lab_col_heads_self"), t("lab_col_heads_spread"),
               t("col_mean_distance"), t("col_effective_keys")]
    cells = [[str(r.heads_by_kind["previous"]), str(r.heads_by_kind["self"]), str(r.heads_by_kind["spread"]),
              mean_sd(r.mean_distance, t, 2), mean_sd(r.effective_keys, t, 2)] for r in h.runs]
    return to_html(pd.DataFrame(cells, index=[str(r.n_head) for r in h.runs], columns=columns), "num",
                   corner="n_head")


def positions_table(p: PositionsFindings, t: Messages) -> Markup:
    columns = [t("col_best_val"), t("lab_col_versus_reference"), t("lab_col_loss_in_order"),
               t("lab_col_loss_shuffled"), t("lab_col_order_gap")]
    cells = [[mean_sd(r.best_val_loss, t), t.number(r.best_val_loss.mean - p.reference.best_val_loss.mean, signed=True),
              mean_sd(r.loss_in_order, t), mean_sd(r.loss_shuffled, t), mean_sd(r.gap, t, signed=True)]
             for r in p.runs]
    index = [t(f"lab_positions_kind_{r.positions}") for r in p.runs]
    return to_html(pd.DataFrame(cells, index=index, columns=columns), "num", corner=t("lab_col_positions"))


def setting(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def runs_table(models: Mapping[str, Model], best: Mapping[str, Spread], reference: str, t: Messages) -> Markup:
    """Every run: how it differs from the reference (its settings, as the run record has them) and its best loss
    over its seeds."""
    cells = []
    for name, model in models.items():
        changed = sorted(differences(model, models[reference]))
        what = ", ".join(f"{key} = {setting(model.get(key))}" for key in changed) or t("lab_the_reference")
        cells.append([what, mean_sd(best[name], t), f"{t.number(best[name].low)} – {t.number(best[name].high)}"])
    frame = pd.DataFrame(cells, index=list(models),
                         columns=[t("lab_col_differs"), t("col_best_val"), t("lab_col_seed_range")])
    return to_html(frame, "num runs", corner=t("lab_col_run"))


def cost_table(cost: AttentionCost, t: Messages) -> Markup:
    """Per length T, the operations of a pass (GFLOP: the projections', the scores' products') and the memory each
    kernel keeps for the backward pass (MiB)."""
    explicit, fused = cost.kernel("explicit"), cost.kernel("sdpa")
    columns = [t("lab_col_cost_gflop_projections"), t("lab_col_cost_gflop_scores"), t("lab_col_cost_mib_explicit"),
               t("lab_col_cost_mib_fused")]
    cells = [[t.number(cost.linear_flops[i] / 1e9, 3), t.number(cost.square_flops[i] / 1e9, 3),
              t.number(explicit.saved_bytes[i] / 2**20, 2), t.number(fused.saved_bytes[i] / 2**20, 2)]
             for i in range(len(cost.lengths))]
    return to_html(pd.DataFrame(cells, index=[str(T) for T in cost.lengths], columns=columns), "num", corner="T")
