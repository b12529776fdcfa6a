"""The class page: a real batch of a class that exercises every section, its page read in a real browser.

The class (``classpage_class.py``) is graded once by the batch command, which also writes the page; the
page is written again from the saved gradebook by ``python -m grader class-page`` in the other language.
Chromium (Debian's, driven by Playwright as in tests/pipeline/test_report_browser.py) reads the figures and
tables back. Set CLASS_PAGE_SCREENSHOTS=docs/screenshots to write the committed screenshots
(docs/screenshots/class-*.jpg).
"""

from __future__ import annotations

import importlib.util
import json
import os
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from grader.classpage import similarity
from grader.records import run_record as record

from ..conftest import CORPORA, SUBMISSIONS

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("classpage_class", HERE / "classpage_class.py")
classpage_class = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(classpage_class)

PHONE_WIDTH = 390
REASONS = {"en": {"refused": "refused", "import failed": "import failed", "timed out": "timed out", "zero": "0 points",
                  "late": "late"},
           "pt": {"refused": "recusada", "import failed": "importação falhou", "timed out": "tempo esgotado",
                  "zero": "0 pontos", "late": "atrasada"}}


class Graded:
    def __init__(self, root: Path, expected: dict, stdout: str):
        self.root, self.expected, self.stdout = root, expected, stdout
        self.csv = root / "grades.csv"
        self.book = pd.read_csv(self.csv, keep_default_na=False).set_index("student")
        self.pages = {"pt": root / "turma.html", "en": root / "class.html"}


@pytest.fixture(scope="module")
def graded(run_grader, tmp_path_factory) -> Graded:
    root = tmp_path_factory.mktemp("class")
    expected = classpage_class.build(root / "handins")
    proc = run_grader(root / "handins", "--csv", root / "grades.csv", "--seed", 5, "--timeout", "1", "--lang", "pt",
                      "--class-page", root / "turma.html", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    again = run_grader("class-page", root / "grades.csv", "--out", root / "class.html", "--lang", "en", timeout=120)
    assert again.returncode == 0, again.stderr[-3000:]
    return Graded(root, expected, proc.stdout)


def open_page(browser, path: Path, width: int, height: int = 900):
    page = browser.new_page(viewport={"width": width, "height": height})
    events = {"errors": [], "requests": []}
    page.on("console", lambda m: m.type == "error" and events["errors"].append(m.text))
    page.on("pageerror", lambda e: events["errors"].append(str(e)))
    page.on("request", lambda r: events["requests"].append(r.url))
    page.goto(path.as_uri(), wait_until="load")
    return page, events


def screenshot(page, label: str) -> None:
    """With CLASS_PAGE_SCREENSHOTS set, the whole page in parts, as `make pages` writes the pipeline's pages'."""
    folder = os.environ.get("CLASS_PAGE_SCREENSHOTS")
    if folder:
        spec = importlib.util.spec_from_file_location("pages", HERE.parents[2] / "scripts" / "pages.py")
        pages = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(pages)
        pages.screenshots(page, Path(folder), label)


def cells(page, selector: str) -> list[list[str]]:
    return page.evaluate(f"""Array.from(document.querySelectorAll('{selector} tbody tr'))
        .map(r => Array.from(r.children).map(c => c.innerText.trim()))""")


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_the_class_page_shows_every_section_with_the_right_counts(browser, graded, lang):
    page, events = open_page(browser, graded.pages[lang], 1280)
    screenshot(page, f"class-{lang}-1280")
    assert events["errors"] == []
    assert [u for u in events["requests"] if not u.startswith(("file://", "data:"))] == []
    book, n = graded.book, len(graded.book)
    # the histogram's bars and the bands' table hold every student once
    bars = page.evaluate("Array.from(document.querySelectorAll('#histogram rect[data-count]'))"
                         ".map(r => +r.dataset.count)")
    assert sum(bars) == n and sum(int(row[1]) for row in cells(page, "#bands")) == n
    # each band says what it holds: its low edge and not its high one, but for the last, which holds both
    bands = [row[0] for row in cells(page, "#bands")]
    words = {"pt": ("de 0 a menos de 3", "de 27 a 30"), "en": ("0 to under 3", "27 to 30")}[lang]
    assert (bands[0], bands[-1]) == words, bands
    # pass rates: a function passes where the gradebook gives it its full points
    rates = {row[0]: row[1] for row in cells(page, "#rates")}
    for function in ("softmax", "scaled_scores", "causal_mask"):
        full = int((book[function] == book[function].max()).sum())
        assert rates[function] == f"{full} / {n}", (function, rates)
    # misconceptions: most frequent first, with the students who made it, the title in the page's language
    mistakes = cells(page, "#mistakes")
    assert mistakes[0][0].endswith("missing-scale") and mistakes[0][1] == "2"
    assert "eva" in mistakes[0][3] and "fabio" in mistakes[0][3]
    title = {"pt": "escores sem escala", "en": "scores not scaled"}[lang]
    assert mistakes[0][0].startswith(title)
    named = {row[0].rsplit("\n", 1)[-1] for row in mistakes}
    assert named == {m for cell in book["mistakes"] for m in cell.split(";") if m}
    # failures no named mistake explains, grouped by function; a function failing through a helper is not one
    unnamed = cells(page, "#unnamed-failures")
    assert any(row[0] == "softmax" and "nina" in row[3] for row in unnamed), unnamed
    assert any(row[0] == "project" and "otto" in row[3] for row in unnamed), unnamed
    assert not any("because your" in row[1] or "porque sua" in row[1] for row in unnamed)
    # nor a failure of a function where that student's mistake is named: it is under the misconceptions
    for row in unnamed:
        for student in row[3].split("\n"):
            results = json.loads((graded.root / "grades_results" / f"{student.strip()}.json").read_text())
            named = [t for t in results["tests"] if t["extra_data"]["function"] == row[0] and t["extra_data"].get(
                "mistakes")]
            assert named == [], (row[0], student)
    # who needs attention, and why, in the page's language
    attention = {row[0]: row[1] for row in cells(page, "#attention-table")}
    for student, reason in graded.expected.items():
        assert REASONS[lang][reason] in attention[student], (student, attention.get(student))
    # the near-copies are the top pair; the note says it is evidence, not a verdict
    pairs = page.evaluate("Array.from(document.querySelectorAll('#pairs tbody tr')).map(r => [r.dataset.first, "
                          "r.dataset.second, +r.dataset.score, +r.dataset.smaller])")
    assert pairs[0][:2] == ["alice", "bruno"] and pairs[0][2] > 0.95
    # the top pair alone: each file whole in the other, where the class's mistakes, written by editing the same
    # corpus files, are each found whole in their source but not the reverse
    assert all(smaller < pairs[0][3] for _, _, _, smaller in pairs[1:])
    assert not any("otto" in pair[:2] for pair in pairs)  # written apart: close to nobody
    assert page.locator("#pair-1 mark").count() > 0  # the shared code is highlighted
    shares = cells(page, "#pairs")[0][2]  # both shares: each file's found in the other
    assert shares.count("%") == 2, shares
    caveat = {"pt": "não um veredito", "en": "not a verdict"}[lang]
    assert caveat in page.inner_text("#similarity")
    run = page.inner_text("#run")
    assert "numpy" in run and "torch" in run and "5" in run  # the versions, the public seed
    page.close()


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_the_class_page_fits_a_phone_screen(browser, graded, lang):
    page, events = open_page(browser, graded.pages[lang], PHONE_WIDTH, 844)
    screenshot(page, f"class-{lang}-390")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_WIDTH
    overflowing = page.evaluate("""Array.from(document.querySelectorAll('svg.chart, table, pre'))
        .filter(e => e.getBoundingClientRect().right > innerWidth + 0.5)
        .map(e => { const box = e.closest('figure, .scroll, pre'); const style = box && getComputedStyle(box);
                    return [e.tagName, box !== null && style.overflowX === 'auto'
                            && box.getBoundingClientRect().right <= innerWidth + 0.5]; })""")
    assert all(ok for _, ok in overflowing), overflowing  # each scrolls in its own box, the page does not
    # every figure shown fits the screen whole (the narrow one of each), its labels still readable
    charts = page.evaluate("""Array.from(document.querySelectorAll('svg.chart')).filter(e => e.checkVisibility())
        .map(e => [e.id, e.getBoundingClientRect().right])""")
    assert sorted(id for id, _ in charts) == ["histogram-narrow", "pass-bars-narrow"], charts
    assert all(right <= PHONE_WIDTH for _, right in charts), charts
    font = page.evaluate("Math.min(...Array.from(document.querySelectorAll('svg.chart text'))"
                         ".filter(t => t.closest('svg').checkVisibility()).map(t => t.getBoundingClientRect().height))")
    assert font >= 10  # the figures' labels stay readable
    boxes = page.evaluate("""Array.from(document.querySelectorAll('.caveat, .kpi, details, p'))
        .filter(e => e.getBoundingClientRect().right > innerWidth + 0.5).map(e => e.className || e.tagName)""")
    assert boxes == []  # no grey box or paragraph runs off the screen
    assert events["errors"] == []
    page.close()


def test_the_batch_writes_a_run_record_and_no_secret(graded):
    run = record.read(graded.csv)
    assert run.seed == 5 and run.secret_fingerprint == "" and run.lang == "pt"
    assert set(run.stems) == set(graded.book.index)
    assert Path(run.submissions).is_absolute() and Path(run.results_dir).is_absolute()  # a page made from elsewhere
    assert run.versions["numpy"] and run.versions["python"]


def test_a_secret_is_shown_only_as_its_fingerprint():
    secret = bytes(range(32))
    shown = record.fingerprint(secret)
    assert len(shown) == 16 and shown not in secret.hex() and shown != record.fingerprint(secret[::-1])


def test_numpy_and_torch_errors_reach_the_student_explained_in_their_language(graded):
    otto = json.loads((graded.root / "grades_results" / "otto.json").read_text())
    project = [t["output"] for t in otto["tests"]
               if t["extra_data"]["function"] == "project" and t["status"] == "failed"]
    assert project and all("Em A @ B o número de colunas de A deve ser igual" in o for o in project), project
    nina = json.loads((graded.root / "grades_results" / "nina.json").read_text())
    softmax = [t["output"] for t in nina["tests"] if t["extra_data"]["function"] == "softmax"]
    assert all("falta um return?" in o for o in softmax), softmax


def test_the_grader_speaks_of_the_students_file_not_the_sandbox(graded):
    outputs = [json.loads(p.read_text())["output"] for p in (graded.root / "grades_results").glob("*.json")]
    assert outputs and not any("/tmp/work" in o for o in outputs)
    helena = json.loads((graded.root / "grades_results" / "helena.json").read_text())["output"]
    assert "helena.py" in helena  # numpy's warning names the student's own file


def test_feedback_pages_are_linked_when_they_are_there(run_grader, graded, tmp_path):
    feedback = tmp_path / "feedback"
    feedback.mkdir()
    (feedback / "eva.html").write_text("<p>eva</p>")
    out = tmp_path / "class.html"
    proc = run_grader("class-page", graded.csv, "--out", out, "--lang", "en", "--similarity-threshold", "0.99")
    assert proc.returncode == 0, proc.stderr
    page = out.read_text()
    assert 'href="feedback/eva.html"' in page and 'href="feedback/fabio.html"' not in page


def test_a_bad_threshold_or_gradebook_is_one_line_in_the_instructors_language(run_grader, graded, tmp_path):
    proc = run_grader("class-page", graded.csv, "--similarity-threshold", "1.5", "--lang", "pt")
    assert proc.returncode == 2 and "--similarity-threshold deve ser" in proc.stderr and "Traceback" not in proc.stderr
    bad = tmp_path / "not_a_gradebook.csv"
    bad.write_text("name,score\nx,1\n")
    proc = run_grader("class-page", bad, "--lang", "en")
    assert proc.returncode == 2 and "not a gradebook" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "not_a_gradebook_class.html").exists()


def _correct_outside_files() -> dict[str, str]:
    expected = tomllib.loads((CORPORA / "outside" / "expected.toml").read_text())
    correct = [name for name, want in expected.items() if not want["lose"] and not want["names"]]
    files = {name: (CORPORA / "outside" / f"{name}.py").read_text() for name in correct}
    files |= {name: (SUBMISSIONS / f"{name}.py").read_text() for name in ("correct_numpy", "correct_torch",
                                                                         "correct_lists")}
    return files


# The outside corpus's pure_python_lists is correct_lists with its variables renamed (diff them: only names
# and comments differ), so it is not independent of it: the one pair the check must find.
DERIVED = ("correct_lists", "pure_python_lists")


def test_no_copy_is_flagged_among_independently_written_correct_files():
    files = _correct_outside_files()
    assert len(files) >= 15
    assert [(p.first, p.second) for p in similarity.close_pairs(files)] == [DERIVED]
    independent = {name: code for name, code in files.items() if name != DERIVED[1]}
    assert similarity.close_pairs(independent) == []
    # and the same check finds a disguised copy of any one of them
    independent["copy"] = classpage_class.renamed(independent["correct_numpy"])
    pairs = similarity.close_pairs(independent)
    assert [(p.first, p.second) for p in pairs] == [("copy", "correct_numpy")] and pairs[0].score > 0.95


def test_the_starter_file_never_counts_as_shared_code():
    starters = {lang: classpage_class.template.render(lang) for lang in ("pt", "en")}
    assert similarity.close_pairs(starters, threshold=0.01) == []

