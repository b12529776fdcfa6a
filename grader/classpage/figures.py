"""The page's two figures as inline SVG (no script, no network): the histogram of totals and the pass-rate bars.

Sizes are in the SVG's own units. Each figure comes in two widths: the wide one for a screen of 40rem or more,
and a narrow one (``narrow=True``: 360 units, labels above the bars) that a phone shows at about its own size,
so that every label stays 10 px or more and nothing scrolls sideways; the page's style sheet shows one of them.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from grader.classpage.stats import Distribution, PassRate
from grader.classpage.words import Words

INK, MUTED, LINE, ACCENT, WARM = "#1b1b1b", "#5a5a5a", "#d9d9d9", "#0072B2", "#D55E00"  # page.css's colours
FONT = 'font-family="system-ui, sans-serif"'


def _text(x: float, y: float, content: str, size: int = 13, anchor: str = "middle", fill: str = INK,
          extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" {FONT}'
            f'{extra}>{escape(content)}</text>')


def histogram(d: Distribution, t: Words, alt: str, narrow: bool = False) -> Markup:
    width, height, left, right, top, bottom = (360, 260, 44, 12, 28, 48) if narrow else (640, 300, 52, 16, 28, 52)
    plot_w, plot_h = width - left - right, height - top - bottom
    tallest = max(d.counts, default=0) or 1
    x = lambda v: left + plot_w * v / d.max_total  # noqa: E731
    y = lambda c: top + plot_h * (1 - c / tallest)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{escape(alt)}" class="chart {"narrow" if narrow else "wide"}" '
             f'id="histogram{"-narrow" if narrow else ""}">']
    step = max(1, -(-tallest // 5))
    for c in range(0, tallest + 1, step):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(c):.1f}" y2="{y(c):.1f}" stroke="{LINE}"/>')
        parts.append(_text(left - 6, y(c) + 4, t.number(c), 12, "end", MUTED))
    for i, count in enumerate(d.counts):
        x0, x1 = x(d.edges[i]) + 1, x(d.edges[i + 1]) - 1
        parts.append(f'<rect x="{x0:.1f}" y="{y(count):.1f}" width="{x1 - x0:.1f}" height="{y(0) - y(count):.1f}" '
                     f'fill="{ACCENT}" data-count="{count}"/>')
        if count:
            parts.append(_text((x0 + x1) / 2, y(count) - 4, t.number(count), 12))
    every = 2 if narrow else max(1, len(d.edges) // 6)
    for edge in sorted(set(d.edges[::every] + [d.edges[-1]])):
        parts.append(_text(x(edge), top + plot_h + 18, t.number(edge), 12, fill=MUTED))
    for value, dash in ((d.q1, ' stroke-dasharray="5 4"'), (d.q3, ' stroke-dasharray="5 4"'), (d.median, "")):
        parts.append(f'<line x1="{x(value):.1f}" x2="{x(value):.1f}" y1="{top - 6}" y2="{top + plot_h}" '
                     f'stroke="{WARM}" stroke-width="2"{dash}/>')
    label_x = min(max(x(d.median), left + 45), width - right - 45)  # the label whole inside the figure
    parts.append(_text(label_x, top - 10, f"{t('hist.median')} {t.number(d.median)}", 12, fill=WARM))
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="{INK}"/>')
    parts.append(_text(left + plot_w / 2, height - 10, t("hist.x"), 13, fill=MUTED))
    parts.append(_text(14, top + plot_h / 2, t("hist.y"), 13, fill=MUTED,
                       extra=f' transform="rotate(-90 14 {top + plot_h / 2:.1f})"'))
    parts.append("</svg>")
    return Markup("".join(parts))


def pass_bars(rates: list[PassRate], t: Words, alt: str, narrow: bool = False) -> Markup:
    """A bar per function or check; narrow, each label stands above its bar instead of beside it."""
    label_w, bar_w, row, top = (0, 290, 40, 4) if narrow else (300, 280, 26, 8)
    width, height = (360 if narrow else label_w + bar_w + 60), top + row * len(rates) + 8
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{escape(alt)}" class="chart {"narrow" if narrow else "wide"}" '
             f'id="pass-bars{"-narrow" if narrow else ""}">']
    for i, rate in enumerate(rates):
        y0 = top + i * row
        label = rate.item if len(rate.item) <= 42 else rate.item[:41] + "…"
        bar_y = y0 + (18 if narrow else 4)
        if narrow:
            parts.append(_text(2, y0 + 13, label, 13, "start"))
        else:
            parts.append(_text(label_w - 8, y0 + 17, label, 13, "end"))
        parts.append(f'<rect x="{label_w}" y="{bar_y}" width="{bar_w}" height="{row - (22 if narrow else 8)}" '
                     f'fill="{LINE}"/>')
        parts.append(f'<rect x="{label_w}" y="{bar_y}" width="{bar_w * rate.share:.1f}" '
                     f'height="{row - (22 if narrow else 8)}" fill="{ACCENT}" data-item="{escape(rate.item)}" '
                     f'data-passed="{rate.passed}"/>')
        parts.append(_text(label_w + bar_w + 6, bar_y + (13 if narrow else 13), t.percent(rate.share), 13, "start"))
    parts.append("</svg>")
    return Markup("".join(parts))
