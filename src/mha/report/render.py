"""Assemble the report: numbers, figures, tables and prose into one self-contained HTML page."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from mha.report import figures, narrative, tables, worked
from mha.report.baselines import Baselines, compute_baselines
from mha.report.heads import HeadStats, all_head_stats
from mha.report.inputs import ReportInputs
from mha.report.messages import Messages
from mha.report.page import LAB_PAGE, environment, figure
from mha.report.runfacts import RunFacts
from mha.schema import ReportConfig

TEMPLATE_NAME = "report.html.j2"

def answer_context(inputs: ReportInputs, baselines: Baselines, t: Messages) -> dict:
    comparison = narrative.compare(inputs.attention, inputs.no_attention, baselines)
    kpis = [
        (t("kpi_best_attention"), comparison.attention_best),
        (t("kpi_best_no_attention"), comparison.no_attention_best),
        (t("kpi_gap"), comparison.gap),
        (t("kpi_unigram"), baselines.unigram),
        (t("kpi_bigram"), baselines.bigram),
    ]
    return {
        # value: exact, for machines (<data value>); text: rounded and localised, for people
        "kpis": [{"label": label, "value": repr(float(v)), "text": t.number(v)} for label, v in kpis],
        "table": tables.answer_table(inputs.attention, inputs.no_attention, baselines, t),
        "baselines_note": t("baselines_note", **tables.baselines_facts(baselines, t)),
        "paragraph": " ".join(narrative.without_attention_paragraph(comparison, t)),
        "generalisation": generalisation_paragraph(inputs, t),
    }


def generalisation_paragraph(inputs: ReportInputs, t: Messages) -> str:
    """The attention model's gap between training and validation loss at the end, and what it means."""
    curve, dropout = inputs.attention.curve, inputs.attention.record.model["dropout"]
    train, val = curve.train_loss[-1], curve.val_loss[-1]
    gap = val - train
    # Below 0.05 nats/char the two losses agree within their evaluation noise (eval_iters batches each).
    best = min(range(len(curve.val_loss)), key=curve.val_loss.__getitem__)
    values = {"train": t.number(train), "val": t.number(val), "gap": t.number(gap)}
    if gap < 0.05:
        return t("gap_none", **values)
    return t("gap_overfit_no_dropout" if dropout == 0 else "gap_overfit_dropout", **values,
             dropout=t.number(dropout, 2), best=t.number(curve.val_loss[best]), best_step=t.integer(curve.step[best]))


def curves_context(inputs: ReportInputs, baselines: Baselines, t: Messages) -> dict:
    svg = figures.learning_curves(inputs.attention.curve, inputs.no_attention.curve, baselines, t)
    alt = t("curves_alt", unigram=t.number(baselines.unigram), bigram=t.number(baselines.bigram),
            final_attention=t.number(inputs.attention.curve.val_loss[-1]),
            final_no_attention=t.number(inputs.no_attention.curve.val_loss[-1]))
    return {
        "figure": figure(svg, alt, t("curves_caption")),
        "training": tables.training_table(inputs.attention, inputs.no_attention, t),
    }


def worked_context(inputs: ReportInputs, t: Messages) -> dict:
    record = inputs.worked_example
    tokens, heads = record.tokens, record.heads
    checks = list(record.checks.values())
    deviation = t.scientific(max(c.max_abs_deviation for c in checks))
    failed = sum(not c.passed for c in checks)
    verdict = (t("worked_verdict_pass", count=len(checks), deviation=deviation) if not failed
               else t("worked_verdict_fail", failed=failed, count=len(checks), deviation=deviation))
    svg = figures.worked_example_heatmaps([h.A for h in heads], tokens, t)
    return {
        "intro": t("worked_intro", tokens=" ".join(tokens), n=len(tokens), d_model=len(record.inputs.X[0]),
                   h=len(heads), d_k=len(heads[0].Q[0]), tolerance=t.number(record.published_tolerance)),
        "verdict": verdict,
        "passed": not failed,
        "blocks": worked.build(record, t),
        "agreement": tables.agreement_table(record.implementations, record.implementation_tolerance, t),
        "figure": figure(svg, t("worked_heatmap_alt", h=len(heads), tokens=", ".join(tokens)),
                         t("worked_heatmap_caption")),
    }


def head_reading(s: HeadStats, t: Messages) -> str:
    """The head's dominant pattern (HeadStats.kind) in words, with the measures that show it."""
    distance = t.number(s.mean_distance, 1)
    if s.kind == "previous":
        return t("reading_previous", previous=t.percent(s.previous_share), distance=distance)
    if s.kind == "self":
        return t("reading_self", own=t.percent(s.self_share), distance=distance)
    return t("reading_spread", previous=t.percent(s.previous_share), distance=distance,
             keys=t.number(s.effective_keys, 1))


def heatmaps_context(inputs: ReportInputs, t: Messages) -> dict:
    maps = inputs.attention_maps
    stats = all_head_stats(maps.weights)
    heads = []
    for s in stats:
        reading = head_reading(s, t)
        title = t("heatmap_title", layer=s.layer, head=s.head)
        svg = figures.attention_heatmap(maps.weights[s.layer - 1][s.head - 1], maps.tokens, title, t)
        heads.append({
            "title": title,
            "reading": reading,
            "figure": figure(svg, t("heatmap_alt", layer=s.layer, head=s.head, reading=reading)),
        })
    return {
        "intro": t("heatmaps_intro", T=len(maps.tokens)),
        "excerpt": maps.excerpt,
        "heads": heads,
        "stats": tables.head_stats_table(stats, t),
    }


def samples_context(inputs: ReportInputs, t: Messages) -> dict:
    train = inputs.attention.record.train
    return {
        "prompt": train["sample_prompt"],
        "seed": train["seed"],
        "runs": [
            {"title": t("model_attention"), "text": inputs.attention.sample,
             "chars": t("sample_chars", chars=t.integer(len(inputs.attention.sample)))},
            {"title": t("model_no_attention"), "text": inputs.no_attention.sample,
             "chars": t("sample_chars", chars=t.integer(len(inputs.no_attention.sample)))},
        ],
    }


def facts_context(inputs: ReportInputs, facts: RunFacts, t: Messages) -> dict:
    missing = t("not_recorded")
    environment_rows = {name: version or missing for name, version in facts.versions.items()}
    environment_rows[t("env_threads")] = facts.threads or missing
    commit = facts.commit or missing
    if facts.commit and facts.modified:
        commit = t("env_commit_modified", commit=facts.commit, files=", ".join(facts.modified))
    environment_rows[t("env_commit")] = commit
    environment_rows[t("env_commit_date")] = facts.commit_date or missing
    return {
        "config": tables.config_table(asdict(inputs.attention.record), asdict(inputs.no_attention.record), t),
        "counts": tables.counts_table(inputs.attention, inputs.no_attention, t),
        "environment": tables.facts_table(environment_rows, t),
    }


def render_report(inputs: ReportInputs, facts: RunFacts, template_dir: Path, config: ReportConfig) -> str:
    """The whole page as a string; the same arguments always give the same string."""
    t = Messages(config.language)
    # split where the runs split (their records agree; mha.report.inputs checks it)
    baselines = compute_baselines(inputs.corpus, inputs.attention.record.data.train_chars, config.bigram_k)
    context = {
        "t": t,
        "lang": t("html_lang"),
        "lab_page": LAB_PAGE,
        "subtitle": t("subtitle", n_layer=inputs.attention_maps.n_layer, n_head=inputs.attention_maps.n_head),
        "answer": answer_context(inputs, baselines, t),
        "curves": curves_context(inputs, baselines, t),
        "worked": worked_context(inputs, t),
        "heatmaps": heatmaps_context(inputs, t),
        "samples": samples_context(inputs, t),
        "facts": facts_context(inputs, facts, t),
    }
    return environment(template_dir).get_template(TEMPLATE_NAME).render(context)
