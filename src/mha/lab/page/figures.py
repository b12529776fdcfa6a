"""The lab page's figures, in the main report's style (mha.report.figures: its rc, colours and SVG writer,
so they are deterministic the same way)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mha.artifacts.run import Curve
from mha.lab.cost import AttentionCost
from mha.lab.page.findings import Spread
from mha.lab.scale import ScaleStatistics
from mha.report.figures import COLOR_BASELINE, OKABE_ITO, RC, localised, plt, to_svg
from mha.report.messages import Messages

COLOR_SCALED, COLOR_UNSCALED = OKABE_ITO[0], OKABE_ITO[1]
COLORS_FIT = OKABE_ITO[2]  # the projections' operations on the cost figure
STANDARD_ERRORS = 2  # the error bars: ± this many standard errors


def grid(ax) -> None:
    ax.grid(True, color="#e6e6e6", linewidth=0.6)


def scale_variance(stats: ScaleStatistics, t: Messages) -> bytes:
    """Var(q·k) against d_k on log-log axes, beside the course's line d_k; the scaled variance against 1."""
    d_k = np.asarray(stats.d_k, dtype=np.float64)
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(7.2, 4.2), layout="constrained")
        ax.plot(d_k, d_k, color=COLOR_BASELINE, linestyle=":", linewidth=1.2, label=t("lab_legend_line_d_k"))
        ax.axhline(1.0, color=COLOR_BASELINE, linestyle="--", linewidth=1.0, label=t("lab_legend_line_one"))
        ax.errorbar(d_k, stats.score_variance, yerr=STANDARD_ERRORS * np.asarray(stats.score_variance_standard_error),
                    color=COLOR_UNSCALED, marker="o", markersize=3.5, linewidth=1.4, capsize=2,
                    label=t("lab_legend_variance"))
        ax.plot(d_k, stats.scaled_score_variance, color=COLOR_SCALED, marker="s", markersize=3.5, linewidth=1.4,
                label=t("lab_legend_scaled_variance"))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel(t("lab_axis_d_k"))
        ax.set_ylabel(t("lab_axis_variance"))
        grid(ax)
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        return to_svg(fig)


def softmax_rows(stats: ScaleStatistics, t: Messages) -> bytes:
    """Largest weight, entropy and Jacobian norm of softmax rows against d_k, with and without the scale."""
    d_k = np.asarray(stats.d_k, dtype=np.float64)
    n = stats.row_length
    panels = (
        ("largest_weight", t("lab_axis_largest_weight"), 1 / n),
        ("entropy", t("lab_axis_entropy"), float(np.log(n))),
        ("jacobian_spectral_norm", t("lab_axis_jacobian"), 1 / n),
    )
    with plt.rc_context(RC):
        fig, axes = plt.subplots(1, 3, figsize=(9.6, 3.4), layout="constrained")
        for ax, (field, label, uniform) in zip(axes, panels, strict=True):
            ax.axhline(uniform, color=COLOR_BASELINE, linestyle=":", linewidth=1.0, label=t("lab_legend_uniform"))
            ax.plot(d_k, getattr(stats.unscaled, field), color=COLOR_UNSCALED, marker="o", markersize=3,
                    linewidth=1.4, label=t("lab_legend_unscaled"))
            ax.plot(d_k, getattr(stats.scaled, field), color=COLOR_SCALED, marker="s", markersize=3,
                    linewidth=1.4, label=t("lab_legend_scaled"))
            ax.set_xscale("log", base=2)
            ax.set_xlabel(t("lab_axis_d_k"))
            ax.set_title(label, fontsize=9)
            ax.yaxis.set_major_formatter(localised(t, 2))
            grid(ax)
        axes[0].legend(loc="best", fontsize=7.5, frameon=False)
        return to_svg(fig)


def validation_curves(curves: Sequence[tuple[str, Sequence[Curve]]], t: Messages) -> bytes:
    """Validation loss against step, one line per (label, one curve per seed): the mean over the seeds, and a band
    from the lowest to the highest seed at each evaluation (the seeds share their evaluation steps)."""
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(7.2, 3.8), layout="constrained")
        for (label, seeds), color in zip(curves, OKABE_ITO, strict=False):
            losses = np.asarray([curve.val_loss for curve in seeds], dtype=np.float64)  # (seeds, evaluations)
            step = seeds[0].step
            ax.fill_between(step, losses.min(axis=0), losses.max(axis=0), color=color, alpha=0.25, linewidth=0)
            ax.plot(step, losses.mean(axis=0), color=color, linewidth=1.6, marker="o", markersize=2.5, label=label)
        ax.set_xlabel(t("axis_step"))
        ax.set_ylabel(t("lab_axis_val_loss"))
        ax.yaxis.set_major_formatter(localised(t, 2))
        ax.set_xlim(left=0)
        grid(ax)
        ax.legend(loc="upper right", fontsize=8, frameon=False)
        return to_svg(fig)


def _bar_range(values: Sequence[Spread]) -> np.ndarray:
    """Error bars from each mean down to the lowest seed and up to the highest: (2, n)."""
    return np.array([[v.mean - v.low for v in values], [v.high - v.mean for v in values]])


def order_losses(runs: Sequence[tuple[str, Spread, Spread, Spread]], t: Messages) -> bytes:
    """(label, loss in order, loss shuffled, gap) per run, each over its seeds, as pairs of bars (the mean, the
    seeds' range as an error bar) with the mean gap above."""
    x = np.arange(len(runs))
    width = 0.38
    in_order, shuffled = [r[1] for r in runs], [r[2] for r in runs]
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(7.2, 3.6), layout="constrained")
        ax.bar(x - width / 2, [v.mean for v in in_order], width, yerr=_bar_range(in_order), capsize=2,
               color=COLOR_SCALED, label=t("lab_legend_in_order"))
        ax.bar(x + width / 2, [v.mean for v in shuffled], width, yerr=_bar_range(shuffled), capsize=2,
               color=COLOR_UNSCALED, label=t("lab_legend_shuffled"))
        for i, (_, low, high, gap) in enumerate(runs):
            ax.annotate(t.number(gap.mean, 3, signed=True), xy=(i, max(low.high, high.high)),
                        xytext=(0, 3), textcoords="offset points", ha="center", va="bottom", fontsize=8)
        ax.set_xticks(x, [r[0] for r in runs])
        ax.set_ylabel(t("lab_axis_last_loss"))
        ax.yaxis.set_major_formatter(localised(t, 1))
        ax.margins(y=0.12)
        grid(ax)
        ax.set_axisbelow(True)
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8, frameon=False)
        return to_svg(fig)


def attention_cost(cost: AttentionCost, t: Messages) -> bytes:
    """The operations of a pass (its projections', its scores' products' and both) and the memory each kernel keeps,
    against T on log-log axes, beside guide lines ∝ T and ∝ T² through the first point of each panel's top line."""
    T = np.asarray(cost.lengths, dtype=np.float64)
    work = [(t("lab_legend_cost_flops"), cost.flops, COLOR_UNSCALED, "o"),
            (t("lab_legend_cost_projections"), cost.linear_flops, COLORS_FIT, "s"),
            (t("lab_legend_cost_scores"), cost.square_flops, COLOR_SCALED, "^")]
    memory = [(t("lab_legend_cost_explicit"), cost.kernel("explicit").saved_bytes, COLOR_UNSCALED, "o"),
              (t("lab_legend_cost_fused"), cost.kernel("sdpa").saved_bytes, COLOR_SCALED, "s")]
    panels = ((work, 1e-9, t("lab_axis_cost_gflop")), (memory, 1 / 2**20, t("lab_axis_cost_mib")))
    with plt.rc_context(RC):
        fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.8), layout="constrained")
        for ax, (lines, unit, title) in zip(axes, panels, strict=True):
            start = lines[0][1][0] * unit
            for power, style, guide in ((1, "--", "lab_legend_cost_linear"), (2, ":", "lab_legend_cost_square")):
                ax.plot(T, start * (T / T[0]) ** power, color=COLOR_BASELINE, linestyle=style, linewidth=1.0,
                        label=t(guide))
            for label, values, color, marker in lines:
                ax.plot(T, np.asarray(values, dtype=np.float64) * unit, color=color, marker=marker, markersize=3.5,
                        linewidth=1.5, label=label)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2)
            ax.set_xlabel(t("lab_axis_cost_length"))
            ax.set_title(title, fontsize=9)
            ax.legend(loc="upper left", fontsize=7.5, frameon=False)
            grid(ax)
        return to_svg(fig)
