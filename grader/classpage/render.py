"""The class page: the gradebook, its results and its hand-ins into one self-contained HTML file.

``write(csv_path, out, lang, threshold)`` reads what a batch left (``record``, ``gradebook``), computes the
figures (``stats``, ``similarity``), words them in ``lang`` and writes ``out`` atomically. Per-student feedback
pages, where some other step wrote them into ``feedback/`` beside the page, are linked from every name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from grader.classpage import figures, gradebook, record, similarity, stats
from grader.classpage.words import Words
from grader.intake.finding import find
from grader.intake.handin import HandIn
from grader.intake.reading import Caps
from grader.messages import NOTATIONS, Message, text
from mha.files import atomic_write_text

HERE = Path(__file__).resolve().parent
SHARED_STYLES = HERE.parents[1] / "pipeline" / "templates"  # page.css, the pipeline pages' style sheet
TEMPLATE = "class_page.html.j2"
SHOWN_SIDE_BY_SIDE = 20  # pairs whose two files the page shows (the table lists every pair)
FEEDBACK_DIR = "feedback"  # per-student pages beside the class page: feedback/<results file stem>.html


def environment() -> jinja2.Environment:
    loaders = [jinja2.FileSystemLoader(str(HERE))]
    if SHARED_STYLES.is_dir():  # a source checkout; an installed wheel has no pipeline/ and the page is plainer
        loaders.append(jinja2.FileSystemLoader(str(SHARED_STYLES)))
    return jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


@dataclass(frozen=True)
class Sources:
    by_student: dict[str, str] | None  # None: the hand-ins' folder could not be read
    folder: str


def read_sources(folder: Path | None) -> Sources:
    """Each student's graded code, read as the batch read it (the intake), or None without the folder."""
    if folder is None or not folder.is_dir():
        return Sources(None, str(folder or "?"))
    sources = {}
    for entry in find(folder).entries:
        try:
            handin = entry.open(Caps())
        except Exception:  # noqa: BLE001 - as in the batch: one unreadable hand-in is left out, not the page
            continue
        if isinstance(handin, HandIn):
            sources[entry.student] = handin.source()
    return Sources(sources, str(folder))


def highlighted(source: str, spans: list[tuple[int, int]]) -> Markup:
    """The source, escaped, with each span found in the other file in <mark>."""
    parts, at = [], 0
    for start, end in sorted(spans):
        start = max(start, at)
        if end <= start:
            continue
        parts += [escape(source[at:start]), Markup("<mark>"), escape(source[start:end]), Markup("</mark>")]
        at = end
    parts.append(escape(source[at:]))
    return Markup("").join(parts)


def _feedback_links(out: Path, students: list[gradebook.Student]) -> dict[str, str]:
    folder = out.parent / FEEDBACK_DIR
    if not folder.is_dir():
        return {}
    return {s.name: f"{FEEDBACK_DIR}/{s.stem}.html" for s in students if (folder / f"{s.stem}.html").is_file()}


def context(csv_path: Path, out: Path, lang: str, threshold: float, submissions: Path | None = None,
            results_dir: Path | None = None) -> dict:
    t = Words(lang)
    run = record.read(csv_path)
    if results_dir is None:
        results_dir = Path(run.results_dir) if run else csv_path.with_name(csv_path.stem + "_results")
    students = gradebook.read(csv_path, results_dir, run.stems if run else None)
    if not students:
        raise ValueError(f"{csv_path} has no student rows: nothing to show")
    folder = submissions or (Path(run.submissions) if run else None)
    sources = read_sources(folder)
    pairs = similarity.close_pairs(sources.by_student, threshold) if sources.by_student is not None else None

    d = stats.distribution(students)
    rates = stats.pass_rates(students)
    found = stats.attention(students)
    n = len(students)
    hist_alt = t("hist.alt", count=n, max_total=t.number(d.max_total), median=t.number(d.median),
                 q1=t.number(d.q1), q3=t.number(d.q3))
    bands = [{"label": t("band", low=t.number(d.edges[i]), high=t.number(d.edges[i + 1])), "count": c}
             for i, c in enumerate(d.counts)]
    languages = {s.name: s.language for s in students}
    mistake = lambda m, who: {"id": m, "title": text(lang, f"mistake_title.{m}"),  # noqa: E731
                              "explanation": _explanation(m, lang, {languages.get(name, "python") for name in who})}
    reason_word = lambda r: t("reason." + r.replace(" ", "_"))  # noqa: E731
    return {
        "lang": lang, "t": t, "n": n,
        "lede": t("lede", count=n, mean=t.number(d.mean), max_total=t.number(d.max_total), median=t.number(d.median)),
        "kpis": [(t("kpi.students"), t.number(n)), (t("kpi.median"), t.number(d.median)),
                 (t("kpi.quartiles"), f"{t.number(d.q1)} · {t.number(d.q3)}"), (t("kpi.mean"), t.number(d.mean)),
                 (t("kpi.full"), t.number(sum(s.total >= d.max_total for s in students))),
                 (t("kpi.zero"), t.number(sum(s.total == 0 for s in students)))],
        "histogram": figures.histogram(d, t, hist_alt), "hist_alt": hist_alt, "bands": bands,
        "rates": [{"item": r.item, "passed": r.passed, "count": r.count, "percent": t.percent(r.share)} for r in rates],
        "pass_bars": figures.pass_bars(rates, t, t("pass_rates.alt", count=n)) if rates else None,
        "misconceptions": [{**mistake(m.mistake, m.students), "count": len(m.students), "students": m.students}
                           for m in stats.misconceptions(students)],
        "unnamed": stats.unnamed_failures(students),
        "attention": [{"student": a.student, "reasons": [reason_word(r) for r in a.reasons], "detail": a.detail,
                       "total": t.number(a.total)} for a in found],
        "pairs": None if pairs is None else [
            {"first": p.first, "second": p.second, "score": t.percent(p.score), "value": f"{p.score:.4f}",
             "first_code": highlighted(p.first_source, p.first_spans) if i < SHOWN_SIDE_BY_SIDE else None,
             "second_code": highlighted(p.second_source, p.second_spans)} for i, p in enumerate(pairs)],
        "similarity_intro": t("similarity.intro", noise=similarity.NOISE, threshold=t.percent(threshold)),
        "sources_folder": sources.folder,
        "run": run_facts(run, t, csv_path, d.max_total),
        "links": _feedback_links(out, students),
        "written": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _explanation(mistake: str, lang: str, languages: set[str]) -> str:
    """A mistake's explanation in the notation of the students who made it: R's where all of them handed in R,
    Python's where none did, both (Python's, then R's where it differs) for a mixed group."""
    worded = {notation: Message(f"mistake.{mistake}").text(lang, notation) for notation in NOTATIONS}
    if languages == {"r"}:
        return worded["r"]
    if "r" in languages and worded["r"] != worded["python"]:
        return f"{worded['python']} R: {worded['r']}"
    return worded["python"]


def run_facts(run: record.RunRecord | None, t: Words, csv_path: Path, total: float) -> list[tuple[str, str]]:
    facts = [(t("run.gradebook"), str(csv_path))]
    if run is None:
        return facts + [(t("run.date"), t("run.unknown"))]
    secret = run.secret_fingerprint or t("run.public_seed", seed=str(run.seed))
    return facts + [(t("run.date"), run.date), (t("run.secret"), secret),
                    (t("run.rubric"), t("run.points", source=t("run.rubric_default") if run.rubric == "default"
                                        else run.rubric, total=t.number(total))),
                    (t("run.seconds"), t("run.seconds_value", seconds=t.number(run.seconds))),
                    (t("run.versions"), ", ".join(f"{k} {v}" for k, v in run.versions.items()))]


def write(csv_path: Path, out: Path, lang: str, threshold: float = similarity.DEFAULT_THRESHOLD,
          submissions: Path | None = None, results_dir: Path | None = None) -> Path:
    page = environment().get_template(TEMPLATE).render(
        **context(csv_path, out, lang, threshold, submissions, results_dir))
    return atomic_write_text(out, page)
