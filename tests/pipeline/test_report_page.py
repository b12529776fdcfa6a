"""The rendered page, from the committed fixtures: its numbers, images, self-containment and structure."""

import base64
import importlib.util
import io
import json
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path

import pytest
import yaml
from markupsafe import escape
from PIL import Image

from mha.report.baselines import compute_baselines
from mha.report.heads import all_head_stats
from mha.report.inputs import load_inputs
from mha.report.messages import CATALOG, Messages
from mha.report.page import LAB_PAGE
from mha.report.render import render_report
from mha.report.runfacts import RunFacts
from mha.schema import ReportConfig

REPO = Path(__file__).resolve().parents[2]
BIGRAM_K = yaml.safe_load((REPO / "params.yaml").read_text())["report"]["bigram_k"]
TEMPLATES = REPO / "pipeline" / "templates"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
_spec = importlib.util.spec_from_file_location("report_fixtures", FIXTURES / "make_report_fixtures.py")
report_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_fixtures)

FACTS = RunFacts(versions={"Python": "3.11.7", "PyTorch": "2.13.0", "DVC": "3.67.1", "NumPy": "2.4.6"},
                 threads="2", commit="0123456789abcdef0123456789abcdef01234567",
                 commit_date="2026-11-21T10:00:00+00:00")
SECTIONS = ["answer", "curves", "worked", "heatmaps", "samples", "facts"]


class Page(HTMLParser):
    """Everything the tests look at: tags in order, attributes, headings, text per element id."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.headings: list[tuple[int, str]] = []
        self._heading: list[str] | None = None
        self.data_values: list[tuple[str, str]] = []
        self._data: str | None = None
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = [tag]
        if tag == "data":
            self._data = attrs["value"]

    def handle_endtag(self, tag):
        if self._heading and tag == self._heading[0]:
            self.headings.append((int(tag[1]), "".join(self._heading[1:]).strip()))
            self._heading = None

    def handle_data(self, data):
        self.text.append(data)
        if self._heading is not None:
            self._heading.append(data)
        if self._data is not None:
            self.data_values.append((self._data, data))
            self._data = None


@pytest.fixture(scope="module")
def inputs():
    return load_inputs(report_fixtures.paths(FIXTURES / "report"))


@pytest.fixture(scope="module")
def html(inputs) -> str:
    return render_report(inputs, FACTS, TEMPLATES, ReportConfig("en", BIGRAM_K))


@pytest.fixture(scope="module")
def html_pt(inputs) -> str:
    return render_report(inputs, FACTS, TEMPLATES, ReportConfig("pt", BIGRAM_K))


@pytest.fixture(scope="module")
def page(html) -> Page:
    return Page(html)


def metrics(name: str) -> dict:
    """A training run's results, from its run record (models/X.json)."""
    return json.loads((FIXTURES / "report" / "models" / f"{name}.json").read_text())["results"]


def image_sources(html: str) -> list[str]:
    return [attrs["src"] for tag, attrs in Page(html).tags if tag == "img"]


def test_the_headline_numbers_are_exactly_the_metrics_and_baselines(page, inputs):
    a, n = metrics("train_attention"), metrics("train_no_attention")
    b = compute_baselines(inputs.corpus, inputs.attention.record.data.train_chars, BIGRAM_K)
    values = [float(v) for v, _ in page.data_values]
    assert values == [a["best_val_loss"], n["best_val_loss"], n["best_val_loss"] - a["best_val_loss"],
                      b.unigram, b.bigram]
    for value, shown in page.data_values:
        assert shown == f"{float(value):.4f}"


def test_the_answer_table_shows_every_loss_of_both_runs(html):
    answer = html[html.index('id="answer"'):html.index('id="curves"')]
    for name in ("train_attention", "train_no_attention"):
        for key in ("best_val_loss", "final_val_loss", "final_train_loss"):
            assert f"<td>{metrics(name)[key]:.4f}</td>" in answer


def test_training_length_and_parameter_counts_are_the_metrics_and_speed_is_left_to_the_run_log(html):
    curves = html[html.index('id="curves"'):html.index('id="worked"')]
    for name in ("train_attention", "train_no_attention"):
        m = metrics(name)
        assert f"<td>{m['iterations']:,}</td><td>{m['tokens_seen']:,}</td>" in re.sub(r">\s+<", "><", curves)
        assert f"<td>{m['parameters']:,}</td>" in html
    elsewhere = str(escape(CATALOG.entries["speed_elsewhere"]["en"]))
    assert elsewhere in curves and "tokens/s" not in html.replace(elsewhere, "")  # said once: where it is


def test_sections_come_in_the_issues_order_under_one_title(page):
    ids = [attrs["id"] for tag, attrs in page.tags if tag == "section"]
    assert ids == SECTIONS
    assert [level for level, _ in page.headings].count(1) == 1
    assert [text for level, text in page.headings if level == 2] == [
        f"{i}. {CATALOG.entries['sec_' + s]['en']}" for i, s in enumerate(SECTIONS, start=1)]


def test_heading_levels_never_skip(page):
    levels = [level for level, _ in page.headings]
    assert levels[0] == 1
    assert all(b <= a + 1 for a, b in pairwise(levels))


def test_every_image_has_alt_text_and_decodes(html):
    images = [attrs for tag, attrs in Page(html).tags if tag == "img"]
    assert len(images) == 1 + 1 + 4  # learning curves, worked example, one per layer and head
    for attrs in images:
        assert len(attrs["alt"]) > 40
        prefix = "data:image/svg+xml;base64,"
        assert attrs["src"].startswith(prefix)
        svg = ET.fromstring(base64.b64decode(attrs["src"][len(prefix):], validate=True))
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"
        for raster in svg.iter("{http://www.w3.org/2000/svg}image"):
            href = raster.get("{http://www.w3.org/1999/xlink}href") or raster.get("href")
            assert href.startswith("data:image/png;base64,")
            png = Image.open(io.BytesIO(base64.b64decode(href.split(",", 1)[1])))
            png.load()
            assert png.size[0] > 0


def test_heatmaps_embed_the_64_by_64_weights_with_the_future_blank(html, inputs):
    svgs = [base64.b64decode(src.split(",", 1)[1]) for src in image_sources(html)[2:]]
    for svg in svgs:
        raster = next(ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}image"))
        href = raster.get("{http://www.w3.org/1999/xlink}href") or raster.get("href")
        png = Image.open(io.BytesIO(base64.b64decode(href.split(",", 1)[1]))).convert("RGBA")
        assert png.size == (64, 64)
        above = [png.getpixel((j, i)) for i in range(64) for j in range(i + 1, 64)]
        assert set(above) == {(255, 255, 255, 255)}  # the masked future is blank
        below = {png.getpixel((j, i)) for i in range(64) for j in range(i + 1)}
        assert (255, 255, 255, 255) not in below


URL_ATTRIBUTES = ("src", "href", "xlink:href", "action", "poster", "data")


def external_references(markup: str) -> list[str]:
    found = [v for tag, attrs in Page(markup).tags for k, v in attrs.items()
             if k in URL_ATTRIBUTES and v and not v.startswith(("data:", "#"))]
    found += [u for u in re.findall(r"url\(\s*['\"]?([^'\")]+)", markup) if not u.startswith(("data:", "#"))]
    found += re.findall(r"@import|@font-face|<script|<link\b|<iframe|<object|<embed", markup, re.I)
    return found


def test_nothing_is_loaded_from_outside_the_file(html):
    assert external_references(html) == [LAB_PAGE]  # a link to the lab page beside it, which loads nothing
    assert f'<a href="{LAB_PAGE}">' in html
    assert not re.search(r"https?://", html)
    for src in image_sources(html):
        svg = base64.b64decode(src.split(",", 1)[1]).decode("utf-8")
        # the SVG namespace names are identifiers, not resources; every href must stay inside
        hrefs = re.findall(r'href="([^"]*)"', svg)
        assert all(h.startswith(("#", "data:")) for h in hrefs)
        assert external_references(re.sub(r'xmlns(:\w+)?="[^"]*"', "", svg)) == []


def test_the_external_reference_check_catches_what_it_should():
    bad = ('<img src="https://x.org/a.png"><a href="http://x.org">x</a>'
           '<div style="background:url(http://x.org/b.png)"></div><script src="a.js"></script>')
    assert external_references(bad) == ["https://x.org/a.png", "http://x.org", "a.js", "http://x.org/b.png", "<script"]


def test_the_worked_example_lays_every_published_matrix_beside_a_check(html, inputs):
    checks = inputs.worked_example.checks
    worked = html[html.index('id="worked"'):html.index('id="heatmaps"')]
    assert worked.count('class="check ok"') == len(checks) == 13
    assert worked.count("✓ matches the published matrix") == 13
    assert "<th>Life</th>" in worked and "<th>is</th>" in worked and "<th>awesome</th>" in worked
    assert "−∞" in worked  # the causal mask M and S + M
    for name in ("torch.nn.MultiheadAttention", "scaled_dot_product_attention"):
        assert f"<th>{name}</th>" in worked


def test_each_head_reading_is_computed_from_its_weights(html, inputs):
    stats = all_head_stats(inputs.attention_maps.weights)
    readings = re.findall(r'<figcaption class="reading">([^<]*)</figcaption>', html)
    assert len(readings) == len(stats) == 4
    t = Messages("en")
    for s, reading in zip(stats, readings, strict=True):
        assert reading.startswith({"previous": "Mostly reads the previous character",
                                   "self": "Mostly reads the current character",
                                   "spread": "Spreads its weight"}[s.kind])
        assert f"{t.number(s.mean_distance, 1)} characters" in reading
    assert [s.kind for s in stats] == ["previous", "self", "spread", "spread"]  # as the fixture recipe built them


def test_samples_of_both_models_appear_escaped_side_by_side(html):
    samples = html[html.index('id="samples"'):html.index('id="facts"')]
    assert samples.count("<pre>") == 2
    for name in ("train_attention", "train_no_attention"):
        text = (FIXTURES / "report" / "samples" / f"{name}.txt").read_text()
        assert text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;") in samples
    assert "Prompt: <code>KING:\n</code>; seed 1337" in samples


def test_run_facts_show_versions_threads_commit_and_how_to_reproduce(html):
    facts = html[html.index('id="facts"'):]
    for value in ("3.11.7", "2.13.0", "3.67.1", "2.4.6", FACTS.commit, FACTS.commit_date):
        assert f"<td>{value}</td>" in facts
    assert "<pre>make repro</pre>" in facts
    assert "<th>model.n_head</th>" in facts and "<th>train.lr</th>" in facts


def test_values_from_the_inputs_are_escaped(inputs):
    evil = "<script>alert(1)</script>"
    tampered = replace(inputs, attention=replace(inputs.attention, sample=evil))
    html = render_report(tampered, FACTS, TEMPLATES, ReportConfig("en", BIGRAM_K))
    assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_same_inputs_render_byte_identical_pages(inputs, html):
    assert render_report(inputs, FACTS, TEMPLATES, ReportConfig("en", BIGRAM_K)) == html


def test_portuguese_page_has_portuguese_prose_and_the_same_numbers(html_pt):
    page = Page(html_pt)
    assert '<html lang="pt-BR">' in html_pt
    assert [text for level, text in page.headings if level == 2][0] == "1. A resposta"
    assert "O que acontece sem atenção" in html_pt and "Sem atenção, cada posição" in html_pt
    a = metrics("train_attention")
    assert f"<td>{a['best_val_loss']:.4f}</td>".replace(".", ",") in html_pt
    assert "The answer" not in html_pt and "What happens without attention" not in html_pt


def test_the_q3_paragraph_changes_when_the_metrics_change(tmp_path, html):
    root = tmp_path / "in"
    shutil.copytree(FIXTURES / "report", root)
    path = root / "models" / "train_no_attention.json"
    record = json.loads(path.read_text())
    m = record["results"]
    m["best_val_loss"] += 0.5
    path.write_text(json.dumps(record))
    changed = render_report(load_inputs(report_fixtures.paths(root)), FACTS, TEMPLATES, ReportConfig("en", BIGRAM_K))

    def q3(page: str) -> str:
        return re.search(r'<p id="q3">(.*?)</p>', page, re.S).group(1)

    assert q3(changed) != q3(html)
    assert f"{m['best_val_loss']:.4f}" in q3(changed)
    assert "plateaus at the bigram floor" in q3(html) and "has not reached the bigram floor" in q3(changed)


def test_weight_leaking_above_the_diagonal_is_drawn_not_hidden():
    from mha.report import figures

    A = [[1.0 if j == 0 else 0.0 for j in range(8)] for _ in range(8)]
    A[2] = [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5]  # row 3 attends to the future
    svg = figures.attention_heatmap(A, list("abcdefgh"), "leak", Messages("en"))
    raster = next(ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}image"))
    href = raster.get("{http://www.w3.org/1999/xlink}href") or raster.get("href")
    png = Image.open(io.BytesIO(base64.b64decode(href.split(",", 1)[1]))).convert("RGBA")
    assert png.getpixel((7, 2)) != (255, 255, 255, 255)  # the leak is coloured
    assert png.getpixel((7, 3)) == (255, 255, 255, 255)  # true zeros in the future stay blank


@pytest.mark.parametrize("language", ["en", "pt"])
@pytest.mark.parametrize(("gap", "dropout", "key"), [(0.01, 0.0, "gap_none"), (0.3, 0.0, "gap_overfit_no_dropout"),
                                                     (0.3, 0.1, "gap_overfit_dropout")])
def test_the_generalisation_paragraph_is_worded_for_every_gap(inputs, language, gap, dropout, key):
    """Each of the three paragraphs renders with exactly the values its text uses (a catalog message refuses any
    other), and the one the gap and the dropout choose is the one shown."""
    from mha.artifacts.run import Curve
    from mha.report.render import generalisation_paragraph

    rows = inputs.attention.curve.rows
    last = replace(rows[-1], train_loss=rows[-1].val_loss - gap)
    record = replace(inputs.attention.record, model={**inputs.attention.record.model, "dropout": dropout})
    run = replace(inputs.attention, curve=Curve([*rows[:-1], last]), record=record)
    t = Messages(language)
    paragraph = generalisation_paragraph(replace(inputs, attention=run), t)
    others = [CATALOG.entries[k][language] for k in ("gap_none", "gap_overfit_no_dropout", "gap_overfit_dropout")
              if k != key]
    own = [f.strip() for f in re.split(r"\{[^}]*\}", CATALOG.entries[key][language]) if f.strip()
           and not any(f.strip() in other for other in others)]  # the literal text only this paragraph has
    assert own and all(fragment in paragraph for fragment in own) and "{" not in paragraph
