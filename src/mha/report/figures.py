"""The report's figures, drawn with matplotlib and returned as SVG bytes.

Deterministic by construction: the Agg backend, a fixed svg.hashsalt (matplotlib otherwise salts the
SVG's element ids at random), no Date in the SVG metadata, and glyphs written as paths so the figure
looks the same whatever fonts the reader has. The same data therefore gives the same bytes.
"""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.text  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from mha.artifacts.run import Curve  # noqa: E402
from mha.report.messages import Messages  # noqa: E402

if TYPE_CHECKING:  # for annotations only: the lab page uses this module without the report's inputs
    from mha.report.baselines import Baselines

RC = {
    "svg.hashsalt": "mha-report",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies and in grey print.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
COLOR_ATTENTION = OKABE_ITO[0]
COLOR_NO_ATTENTION = OKABE_ITO[1]
COLOR_BASELINE = "#555555"
# What an invisible character looks like on an axis.
VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥"}


def visible(char: str) -> str:
    return VISIBLE.get(char, char)


def localised(t: Messages, decimals: int) -> matplotlib.ticker.FuncFormatter:
    """Axis numbers with the page's decimal separator (2.5 in English, 2,5 in Portuguese)."""
    return matplotlib.ticker.FuncFormatter(lambda value, _: t.number(value, decimals))


# Legibility: a figure is shown at least MIN_SHOWN_PX wide (page.css: narrower screens scroll it sideways), and
# its smallest text must then be 10 px or more, so each text is at least this many points per inch of figure width
# (10 px * width_in * 72 / 576 px = 1.25 pt per inch). to_svg raises smaller texts to it, the lab's figures too.
MIN_SHOWN_PX = 576
MIN_TEXT_PX = 10
MIN_PT_PER_INCH = MIN_TEXT_PX * 72 / MIN_SHOWN_PX


def legible(fig) -> None:
    """Raise every text of ``fig`` smaller than the page can show at MIN_TEXT_PX (see MIN_PT_PER_INCH)."""
    smallest = MIN_PT_PER_INCH * fig.get_figwidth()
    fig.draw_without_rendering()  # tick labels exist only once the figure is laid out
    for ax in fig.axes:
        for axis, which in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            labels = [label for label in axis.get_ticklabels() if label.get_text()]
            if labels and min(label.get_fontsize() for label in labels) < smallest:
                ax.tick_params(axis=which, labelsize=smallest)  # survives the ticks' re-creation at save
    for text in fig.findobj(matplotlib.text.Text):
        if text.get_text() and text.get_fontsize() < smallest:
            text.set_fontsize(smallest)


def loss_axis(ax, losses, t: Messages, first=None) -> None:
    """A loss axis scaled to the range that tells runs apart; ``first`` (the step-0 loss) marked, not plotted to.

    The untrained loss (about ln(vocab) = 4.2) is far above every later one, and an axis reaching it squeezes
    curves that differ by a few hundredths into one line.
    """
    values = [v for v in losses if np.isfinite(v)]
    low, high = min(values), max(values)
    pad = max(0.05 * (high - low), 0.01)
    ax.set_ylim(low - pad, high + pad)
    if first is not None and first > high + pad:
        ax.annotate(t("step0_marker", loss=t.number(first, 2)), xy=(0, 1), xycoords="axes fraction",
                    xytext=(4, -2), textcoords="offset points", ha="left", va="top", color=COLOR_BASELINE)


def to_svg(fig) -> bytes:
    legible(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buffer.getvalue()


def data_uri(svg: bytes) -> str:
    """An <img src> for an SVG: the figure travels inside the page, and its ids cannot clash with others."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def learning_curves(attention: Curve, no_attention: Curve, baselines: Baselines, t: Messages) -> bytes:
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(7.2, 4.6), layout="constrained")
        for curve, color, name in (
            (attention, COLOR_ATTENTION, t("model_attention")),
            (no_attention, COLOR_NO_ATTENTION, t("model_no_attention")),
        ):
            ax.plot(curve.step, curve.train_loss, color=color, linestyle="--", linewidth=1.2,
                    label=t("legend_train", model=name))
            ax.plot(curve.step, curve.val_loss, color=color, linestyle="-", linewidth=1.8, marker="o",
                    markersize=2.5, label=t("legend_val", model=name))
        last_step = max(attention.step[-1], no_attention.step[-1])
        for value, label in ((baselines.unigram, t("baseline_unigram")), (baselines.bigram, t("baseline_bigram"))):
            ax.axhline(value, color=COLOR_BASELINE, linestyle=":", linewidth=1.2)
            ax.annotate(f"{label}: {t.number(value, 3)}", xy=(last_step, value), xytext=(0, 3),
                        textcoords="offset points", ha="right", va="bottom", fontsize=8, color=COLOR_BASELINE)
        ax.set_xlabel(t("axis_step"))
        ax.set_ylabel(t("axis_loss"))
        later = [v for c in (attention, no_attention) for v in c.train_loss[1:] + c.val_loss[1:]]
        first = max(attention.val_loss[0], no_attention.val_loss[0])
        loss_axis(ax, later + [baselines.unigram, baselines.bigram] if len(later) else attention.val_loss, t,
                  first=first)
        ax.yaxis.set_major_formatter(localised(t, 2))
        ax.set_xlim(left=0)
        ax.grid(True, color="#e6e6e6", linewidth=0.6)
        ax.legend(loc="upper right", fontsize=8, frameon=False)
        return to_svg(fig)


def attention_heatmap(A, tokens: list[str], title: str, t: Messages) -> bytes:
    """One head's (T, T) weights; the masked upper triangle is left blank, so the causal structure shows."""
    A = np.asarray(A, dtype=np.float64)
    T = A.shape[0]  # (T, T)
    # Blank where the model put exactly no weight on a future key; any weight that leaked above the
    # diagonal stays coloured, so a broken mask shows instead of being painted over.
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    shown = np.where(future & (A == 0.0), np.nan, A)  # (T, T)
    labels = [visible(c) for c in tokens]
    with plt.rc_context(RC):
        # Fixed axes rather than a layout engine: a square image keeps its colour bar right beside it.
        fig = plt.figure(figsize=(6.4, 5.45))
        ax = fig.add_axes((0.085, 0.085, 0.76, 0.9))
        cax = fig.add_axes((0.84, 0.2, 0.022, 0.6))
        cmap = plt.get_cmap("viridis").with_extremes(bad="#ffffff")
        # A square-root colour scale: most weights are small, and a linear one would paint them all alike.
        norm = matplotlib.colors.PowerNorm(gamma=0.5, vmin=0.0, vmax=1.0)
        image = ax.imshow(shown, cmap=cmap, norm=norm, interpolation="none", aspect="equal")
        # The characters as plain texts beside the cells: 128 matplotlib Ticks per map cost a second.
        ax.set_xticks([])
        ax.set_yticks([])
        style = {"fontsize": MIN_PT_PER_INCH * 6.4, "fontfamily": "DejaVu Sans Mono", "clip_on": False}
        for k, label in enumerate(labels):
            ax.text(k, T - 0.3, label, ha="center", va="top", **style)  # under column k (y grows downwards)
            ax.text(-0.8, k, label, ha="right", va="center", **style)  # left of row k
        ax.set_xlabel(t("axis_key"), labelpad=9)
        ax.set_ylabel(t("axis_query"), labelpad=9)
        ax.set_gid(title)  # named in the SVG; the page shows the title as a heading above the figure
        for spine in ax.spines.values():
            spine.set_visible(False)
        fig.colorbar(image, cax=cax, label=t("colorbar"), ticks=[0, 0.05, 0.2, 0.5, 1.0], format=localised(t, 2))
        return to_svg(fig)


def worked_example_heatmaps(heads_A: list, tokens: list[str], t: Messages) -> bytes:
    """The worked example's attention weights, one panel per head, with the tokens on both axes."""
    with plt.rc_context(RC):
        fig, axes = plt.subplots(1, len(heads_A), figsize=(3.2 * len(heads_A), 3.0), layout="constrained")
        for h, (ax, A) in enumerate(zip(np.atleast_1d(axes), heads_A, strict=True), start=1):
            A = np.asarray(A, dtype=np.float64)
            n = A.shape[0]  # (n, n)
            masked = np.triu(np.ones((n, n), dtype=bool), k=1)
            ax.imshow(np.where(masked, np.nan, A), cmap=plt.get_cmap("Blues").with_extremes(bad="#ffffff"),
                      vmin=0.0, vmax=1.0, interpolation="none")
            for i in range(n):
                for j in range(n):
                    text = "0" if masked[i, j] else t.number(A[i, j], 3)
                    ax.text(j, i, text, ha="center", va="center", fontsize=8,
                            color="#999999" if masked[i, j] else ("white" if A[i, j] > 0.6 else "black"))
            ax.set_xticks(range(n), tokens)
            ax.set_yticks(range(n), tokens)
            ax.tick_params(length=0)
            ax.set_title(t("head_heading", head=h), fontsize=10)
            ax.set_xlabel(t("axis_key"))
            ax.set_ylabel(t("axis_query"))
            for spine in ax.spines.values():
                spine.set_visible(False)
        return to_svg(fig)
