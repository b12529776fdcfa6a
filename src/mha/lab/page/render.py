"""Assemble the lab page: for each question the course's claim, the measured figures, a table and the
paragraph written from the numbers, through the template pipeline/templates/lab.html.j2."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mha.lab.page import figures, narrative, tables
from mha.lab.page.findings import (
    DIFFERENCE_Z,
    ORDER_GAP_THRESHOLD,
    LabFindings,
    best_loss,
    lab_findings,
    spread,
)
from mha.lab.page.inputs import LabInputs, LabRun
from mha.lab.page.roles import LabRoles, assign_roles
from mha.report.messages import Message, Messages
from mha.report.page import REPORT_PAGE, environment, figure
from mha.schema import ReportConfig

TEMPLATE_NAME = "lab.html.j2"


def worded(sentences: Iterable[Message], t: Messages) -> str:
    """A paragraph: the judged sentences in the page's language."""
    return " ".join(m.text(t.language) for m in sentences)


def seed_curves(run: LabRun) -> list:
    return [seed.curve for seed in run.seeds]


def scale_context(inputs: LabInputs, roles: LabRoles, found: LabFindings, t: Messages) -> dict:
    stats, s, pair = inputs.scale, found.scale, found.trained_scale
    runs = inputs.runs
    curves = [(t("lab_legend_scaled"), seed_curves(runs[roles.scaled])),
              (t("lab_legend_unscaled"), seed_curves(runs[roles.unscaled]))]
    return {
        "setup": t("lab_scale_setup", samples=stats.samples, n=stats.row_length, first=s.d_k_first, last=s.d_k_last),
        "variance": figure(figures.scale_variance(stats, t),
                           t("lab_scale_variance_alt", first=s.d_k_first, last=s.d_k_last,
                             low=s.scaled_variance_low, high=s.scaled_variance_high),
                           t("lab_scale_variance_caption")),
        "rows": figure(figures.softmax_rows(stats, t),
                       t("lab_scale_rows_alt", last=s.d_k_last, weight=s.weight_unscaled_last,
                         weight_scaled=s.weight_scaled_last, peak_d_k=s.jacobian_unscaled_peak_d_k),
                       t("lab_scale_rows_caption", n=stats.row_length)),
        "table": tables.scale_table(stats, t),
        "paragraph": worded(narrative.scale_paragraph(s), t),
        "trained_intro": t("lab_scale_trained_intro", scaled=roles.scaled, unscaled=roles.unscaled,
                           n_head=pair.n_head, d_k=pair.d_k),
        "curves": figure(figures.validation_curves(curves, t),
                         t("lab_curves_alt", runs=", ".join(label for label, _ in curves)), t("lab_curves_caption")),
        "trained_table": tables.trained_scale_table(pair, t),
        "trained_paragraph": worded(narrative.trained_scale_paragraph(pair, found.noise, found.steps), t),
    }


def heads_context(inputs: LabInputs, found: LabFindings, t: Messages) -> dict:
    h = found.heads
    curves = [(t("lab_legend_heads", n_head=r.n_head), seed_curves(inputs.runs[r.name])) for r in h.runs]
    return {
        "curves": figure(figures.validation_curves(curves, t),
                         t("lab_curves_alt", runs=", ".join(label for label, _ in curves)), t("lab_curves_caption")),
        "table": tables.heads_table(h, t),
        "kinds": tables.head_kinds_table(h, t),
        "paragraph": worded(narrative.heads_paragraph(h, found.noise, found.steps), t),
        "margin": t("lab_margin_note", margin=found.noise.margin),
    }


def positions_context(inputs: LabInputs, found: LabFindings, t: Messages) -> dict:
    p = found.positions
    labels = [t(f"lab_positions_kind_{r.positions}") for r in p.runs]
    curves = [(label, seed_curves(inputs.runs[r.name])) for label, r in zip(labels, p.runs, strict=True)]
    order = next(iter(inputs.runs.values())).seeds[0].order
    return {
        "order_setup": t("lab_order_setup", windows=order.windows, context=order.context,
                         threshold=ORDER_GAP_THRESHOLD),
        "order": figure(figures.order_losses([(label, r.loss_in_order, r.loss_shuffled, r.gap)
                                              for label, r in zip(labels, p.runs, strict=True)], t),
                        t("lab_order_alt", runs=", ".join(
                            f"{label} {t.number(r.gap.mean, 3, signed=True)} ± {t.number(r.gap.sd, 3)}"
                            for label, r in zip(labels, p.runs, strict=True))),
                        t("lab_order_caption")),
        "curves": figure(figures.validation_curves(curves, t),
                         t("lab_curves_alt", runs=", ".join(labels)), t("lab_curves_caption")),
        "table": tables.positions_table(p, t),
        "paragraph": worded(narrative.positions_paragraph(p, found.noise, found.steps), t),
    }


def cost_context(inputs: LabInputs, block_size: int, t: Messages) -> dict:
    cost = inputs.cost
    first, last = cost.lengths[0], cost.lengths[-1]
    return {
        "setup": t("lab_cost_setup", n_embd=cost.n_embd, n_head=cost.n_head, batch=cost.batch, first=first,
                   last=last),
        "figure": figure(figures.attention_cost(cost, t), t("lab_cost_alt", first=first, last=last),
                         t("lab_cost_caption")),
        "table": tables.cost_table(cost, t),
        "paragraph": worded(narrative.cost_paragraph(cost, block_size), t),
    }


def render_lab_page(inputs: LabInputs, template_dir: Path, config: ReportConfig) -> str:
    """The whole page as a string; the same arguments always give the same string."""
    t = Messages(config.language)
    models = {name: run.model for name, run in inputs.runs.items()}
    roles = assign_roles(models)
    found = lab_findings(inputs, roles)
    best = {name: spread(run, best_loss) for name, run in inputs.runs.items()}
    train = inputs.runs[roles.reference].record.train
    noise = found.noise
    context = {
        "t": t,
        "lang": t("html_lang"),
        "report_page": REPORT_PAGE,
        "intro": t("lab_intro", runs=len(inputs.runs), reference=roles.reference, iters=train["max_iters"],
                   seeds=noise.seeds),
        "runs": tables.runs_table(models, best, roles.reference, t),
        "noise": t("lab_noise", sd=noise.sd, runs=noise.runs, seeds=noise.seeds, margin=noise.margin, z=DIFFERENCE_Z)
                 + " " + t("lab_settled_intro", steps=found.steps),
        "scale": scale_context(inputs, roles, found, t),
        "heads": heads_context(inputs, found, t),
        "positions": positions_context(inputs, found, t),
        "cost": cost_context(inputs, inputs.runs[roles.reference].model["block_size"], t),
        "samples": [{"name": name, "text": run.seeds[0].sample} for name, run in inputs.runs.items()],
    }
    return environment(template_dir).get_template(TEMPLATE_NAME).render(context)
