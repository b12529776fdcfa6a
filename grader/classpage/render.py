"""The class page: the gradebook, its results and its hand-ins into one self-contained HTML file.

``write(csv_path, out, lang, threshold)`` reads what a batch left (``grader.records.run_record``, ``gradebook``),
computes the figures (``stats``, ``similarity``), words them in ``lang`` and writes ``out`` atomically. Per-student
feedback pages are linked from every name: where the batch's ``--feedback-dir`` put them (the run record says), else in
``feedback/`` beside the page.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import jinja2
from markupsafe import Markup, escape

from grader.classpage import bounded_similarity, figures, fingerprints, gradebook, similarity, stats
from grader.classpage.words import Words
from grader.intake.finding import find
from grader.intake.handin import HandIn
from grader.intake.reading import Caps
from grader.lms import download
from grader.lms.feedback_page import page_name
from grader.messages import NOTATIONS, Message, text
from grader.records import run_record as record
from mha.files import atomic_write_text

HERE = Path(__file__).resolve().parent
SHARED_STYLES = HERE.parents[1] / "pipeline" / "templates"  # page.css, the pipeline pages' style sheet
TEMPLATE = "class_page.html.j2"
SHOWN_SIDE_BY_SIDE = 20  # pairs whose two files the page shows (the table lists every pair)
SHOWN_CHARS = 12_000  # of each file in a side-by-side view: the page stays a few MiB whatever the hand-ins
FEEDBACK_DIR = "feedback"  # per-student pages beside the class page: feedback/<results file stem>.html


def environment() -> jinja2.Environment:
    loaders = [jinja2.FileSystemLoader(str(HERE))]
    if SHARED_STYLES.is_dir():  # a source checkout; an installed wheel has no pipeline/ and the page is plainer
        loaders.append(jinja2.FileSystemLoader(str(SHARED_STYLES)))
    return jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


@dataclass(frozen=True)
class Sources:
    by_student: dict[str, similarity.Code] | None  # None: the hand-ins' folder could not be read
    folder: str
    truncated: tuple[str, ...] = ()  # hand-ins cut at bounded_similarity.FILE_CHARS
    left_out: tuple[str, ...] = ()  # hand-ins past bounded_similarity.TOTAL_CHARS, not compared


def read_sources(folder: Path | None, shown_as: Path | None = None) -> Sources:
    """Each student's graded code, read as the batch read it (the bounded intake), or None without the hand-ins;
    each cut at ``FILE_CHARS`` and the class at ``TOTAL_CHARS`` (in the order of the names), so that no more than
    that is ever held or compared. ``folder`` is a batch folder or the LMS's zip as downloaded (unpacked as the
    batch unpacks it); the page names ``shown_as`` (what the instructor gave) where it is not the folder read, never
    the grader's own copy."""
    shown = str(shown_as or folder or "?")
    if folder is not None and folder.is_file() and folder.suffix.lower() == ".zip":
        try:
            with download.opened(folder) as unpacked:
                return replace(read_sources(unpacked), folder=shown)
        except download.DownloadError:
            return Sources(None, shown)
    if folder is None or not folder.is_dir():
        return Sources(None, shown)
    sources, truncated, left_out, total = {}, [], [], 0
    for entry in sorted(find(folder).entries, key=lambda e: e.student):
        try:
            handin = entry.open(Caps())
        except Exception:  # noqa: BLE001 - as in the batch: one unreadable hand-in is left out, not the page
            continue
        if not isinstance(handin, HandIn):
            continue
        code = handin.source()
        if len(code) > bounded_similarity.FILE_CHARS:
            truncated.append(entry.student)
            code = code[: bounded_similarity.FILE_CHARS]
        if total + len(code) > bounded_similarity.TOTAL_CHARS:
            left_out.append(entry.student)
            continue
        total += len(code)
        sources[entry.student] = similarity.Code(code, handin.language)
    return Sources(sources, shown, tuple(truncated), tuple(left_out))


def highlighted(source: str, spans: list[tuple[int, int]], limit: int = SHOWN_CHARS) -> Markup:
    """The source's first ``limit`` characters, escaped, with each span found in the other file in <mark>."""
    shown = source[:limit]
    parts, at = [], 0
    for start, end in sorted(spans):
        start, end = max(start, at), min(end, len(shown))
        if end <= start:
            continue
        parts += [escape(shown[at:start]), Markup("<mark>"), escape(shown[start:end]), Markup("</mark>")]
        at = end
    parts.append(escape(shown[at:]))
    return Markup("").join(parts)


def similar_pairs(sources: Sources, students: list[gradebook.Student], threshold: float, t: Words) -> dict:
    """The similarity section's pairs and what was skipped, worded."""
    notes = []
    if sources.truncated:
        notes.append(t("similarity.truncated", count=len(sources.truncated), chars=t.number(
            bounded_similarity.FILE_CHARS), names=", ".join(sources.truncated)))
    if sources.left_out:
        notes.append(t("similarity.left_out", count=len(sources.left_out), chars=t.number(
            bounded_similarity.TOTAL_CHARS), names=", ".join(sources.left_out)))
    if sources.by_student is None:
        return {"pairs": None, "notes": notes, "skipped": t("similarity.not_run", folder=sources.folder)}
    outcome = bounded_similarity.compare(sources.by_student, threshold)
    if outcome.pairs is None:
        values = {"timeout": {"seconds": bounded_similarity.SECONDS},
                  "memory": {"memory": round(bounded_similarity.MEMORY_BYTES / 2**20)}}.get(outcome.failure, {})
        why = t(f"similarity.skipped_{outcome.failure}", **values)
        return {"pairs": None, "notes": notes, "skipped": why}
    by_name = {s.name: s for s in students}

    def code(name: str, spans: list[tuple[int, int]]) -> Markup:
        source = sources.by_student[name].source
        more = len(source) - SHOWN_CHARS
        cut = Markup('\n<span class="cut">{}</span>').format(t("similarity.cut", chars=t.number(more))) \
            if more > 0 else Markup("")
        return highlighted(source, spans) + cut

    rows = []
    for i, p in enumerate(outcome.pairs):
        a, b = by_name.get(p.first), by_name.get(p.second)
        same = stats.shared_failures(a, b) if a and b else None
        shown = i < SHOWN_SIDE_BY_SIDE
        rows.append({"first": p.first, "second": p.second, "score": t.percent(p.score), "value": f"{p.score:.4f}",
                     "smaller": f"{min(p.shares):.4f}",
                     "shares": [t.percent(p.shares[0]), t.percent(p.shares[1])],
                     "failures": "" if same is None else t(
                         "similarity.same_values" if same.same_values else "similarity.same_failures",
                         count=same.tests),
                     "first_code": code(p.first, p.first_spans) if shown else None,
                     "second_code": code(p.second, p.second_spans) if shown else None})
    return {"pairs": rows, "notes": notes, "skipped": ""}


def feedback_links(out: Path, students: list[gradebook.Student], folder: Path | None = None) -> dict[str, str]:
    """Each student's link to their feedback page, relative to the page at ``out``: in ``folder`` (where
    ``--feedback-dir`` put them), else in ``feedback/`` beside the page; only pages that are there."""
    folder = folder if folder is not None else out.parent / FEEDBACK_DIR
    if not folder.is_dir():
        return {}
    links = {}
    for s in students:
        page = folder / page_name(s.stem)
        if page.is_file():
            try:
                relative = Path(os.path.relpath(page.resolve(), out.resolve().parent)).as_posix()
            except ValueError:  # another drive (Windows): the page's own address
                links[s.name] = page.resolve().as_uri()
                continue
            links[s.name] = quote(relative)
    return links


def context(csv_path: Path, out: Path, lang: str, threshold: float, submissions: Path | None = None,
            results_dir: Path | None = None, feedback_dir: Path | None = None, shown_as: Path | None = None) -> dict:
    t = Words(lang)
    run = record.read(csv_path)
    if results_dir is None:
        results_dir = Path(run.results_dir) if run else csv_path.with_name(csv_path.stem + "_results")
    students = gradebook.read(csv_path, results_dir, run.stems if run else None)
    if not students:
        raise ValueError(f"{csv_path} has no student rows: nothing to show")
    folder = submissions or (Path(run.submissions) if run else None)
    sources = read_sources(folder, shown_as)
    if feedback_dir is None and run is not None and run.feedback_dir:
        feedback_dir = Path(run.feedback_dir)
    similar = similar_pairs(sources, students, threshold, t)

    d = stats.distribution(students)
    rates = stats.pass_rates(students)
    found = stats.attention(students)
    n = len(students)
    hist_alt = t("hist.alt", count=n, max_total=t.number(d.max_total), median=t.number(d.median),
                 q1=t.number(d.q1), q3=t.number(d.q3))
    # numpy's bins hold their low edge and not their high one, but for the last, which holds both: said so
    bands = [{"label": t("band_last" if i == len(d.counts) - 1 else "band", low=t.number(d.edges[i]),
                         high=t.number(d.edges[i + 1])), "count": c} for i, c in enumerate(d.counts)]
    languages = {s.name: s.language for s in students}
    mistake = lambda m, who: {"id": m, "title": text(lang, f"mistake_title.{m}"),  # noqa: E731
                              "explanation": _explanation(m, lang, {languages.get(name, "python") for name in who})}
    reason_word = lambda r: t("reason." + r.replace(" ", "_"))  # noqa: E731
    detail = lambda a: "; ".join(filter(None, [a.detail, a.lookalike and t("lookalike", others=a.lookalike)]))  # noqa: E731
    return {
        "lang": lang, "t": t, "n": n,
        "lede": t("lede", count=n, mean=t.number(d.mean), max_total=t.number(d.max_total), median=t.number(d.median)),
        "kpis": [(t("kpi.students"), t.number(n)), (t("kpi.median"), t.number(d.median)),
                 (t("kpi.quartiles"), f"{t.number(d.q1)} · {t.number(d.q3)}"), (t("kpi.mean"), t.number(d.mean)),
                 (t("kpi.full"), t.number(sum(s.total >= d.max_total for s in students))),
                 (t("kpi.zero"), t.number(sum(s.total == 0 for s in students)))],
        "histogram": figures.histogram(d, t, hist_alt) + figures.histogram(d, t, hist_alt, narrow=True),
        "hist_alt": hist_alt, "bands": bands,
        "rates": [{"item": r.item, "passed": r.passed, "count": r.count, "percent": t.percent(r.share)} for r in rates],
        "pass_bars": figures.pass_bars(rates, t, t("pass_rates.alt", count=n))
        + figures.pass_bars(rates, t, t("pass_rates.alt", count=n), narrow=True) if rates else None,
        "misconceptions": [{**mistake(m.mistake, m.students), "count": len(m.students), "students": m.students}
                           for m in stats.misconceptions(students)],
        "unnamed": stats.unnamed_failures(students),
        "attention": [{"student": a.student, "reasons": [reason_word(r) for r in a.reasons],
                       "detail": detail(a),
                       "total": t.number(a.total)} for a in found],
        "pairs": similar["pairs"], "similarity_notes": similar["notes"], "similarity_skipped": similar["skipped"],
        "similarity_intro": t("similarity.intro", tokens=fingerprints.K, threshold=t.percent(threshold)),
        "run": run_facts(run, t, csv_path, d.max_total),
        "links": feedback_links(out, students, feedback_dir),
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
          submissions: Path | None = None, results_dir: Path | None = None, feedback_dir: Path | None = None,
          shown_as: Path | None = None) -> Path:
    page = environment().get_template(TEMPLATE).render(
        **context(csv_path, out, lang, threshold, submissions, results_dir, feedback_dir, shown_as))
    return atomic_write_text(out, page)
