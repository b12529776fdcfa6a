"""The report and the lab page in a real browser: Debian's Chromium, headless, driven by Playwright, offline from file://.

Chromium comes from apt (.ci/run installs it); Playwright only drives it (executable_path), so its own
browser download is never needed.
"""

import importlib.util
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
_spec = importlib.util.spec_from_file_location("report_fixtures", FIXTURES / "make_report_fixtures.py")
report_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_fixtures)

PHONE_WIDTH = 390


@pytest.fixture(scope="module")
def report_url(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("report") / "index.html"
    args = [sys.executable, str(REPO / "pipeline" / "report.py"),
            *report_fixtures.cli_args(FIXTURES / "report"), "--out", str(out)]
    subprocess.run(args, check=True, capture_output=True, cwd=REPO, timeout=120)
    return out.as_uri()


# The lab page, rendered by its stage from its fixtures.

_spec = importlib.util.spec_from_file_location("lab_fixtures", FIXTURES / "make_lab_fixtures.py")
lab_fixtures = importlib.util.module_from_spec(_spec)
sys.modules["lab_fixtures"] = lab_fixtures  # its dataclasses look their module up
_spec.loader.exec_module(lab_fixtures)


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("lab") / "lab.html"
    lab = FIXTURES / "lab"
    args = [sys.executable, str(REPO / "pipeline" / "lab_report.py"), *lab_fixtures.cli_args(lab),
            "--params", str(lab / "params.yaml"), "--out", str(out)]
    subprocess.run(args, check=True, capture_output=True, cwd=REPO, timeout=120)
    return out.as_uri()


def open_page(browser, url: str, width: int, height: int = 900):
    page = browser.new_page(viewport={"width": width, "height": height})
    events = {"console_errors": [], "page_errors": [], "requests": [], "failed": []}
    page.on("console", lambda m: m.type == "error" and events["console_errors"].append(m.text))
    page.on("pageerror", lambda e: events["page_errors"].append(str(e)))
    page.on("request", lambda r: events["requests"].append(r.url))
    page.on("requestfailed", lambda r: events["failed"].append(r.url))
    page.goto(url, wait_until="load")
    return page, events


def non_white_fraction(png: bytes) -> tuple[float, float]:
    grey = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float64)  # (H, W)
    return float((grey < 245).mean()), float(grey.std())


# Each page: the fixture that renders it, its title's start and its number of figures.
PAGES = {"report": ("report_url", "Masked multi-head attention", 6),
         "lab": ("lab_url", "The course's questions, measured", 7)}  # the cost section's figure too


@pytest.mark.parametrize("which", PAGES)
def test_the_page_renders_offline_with_no_errors_and_no_network(browser, which, request, tmp_path):
    url_fixture, title, figures = PAGES[which]
    report_url = request.getfixturevalue(url_fixture)
    page, events = open_page(browser, report_url, 1280)
    shot = page.screenshot(full_page=True)
    (tmp_path / "desktop.png").write_bytes(shot)
    assert events["console_errors"] == [] and events["page_errors"] == [] and events["failed"] == []
    assert [u for u in events["requests"] if not u.startswith(("file://", "data:"))] == []
    assert events["requests"][0] == report_url
    # every figure decoded and laid out
    sizes = page.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.clientWidth])")
    assert len(sizes) == figures and all(complete and natural > 0 and shown > 200 for complete, natural, shown in sizes)
    non_white, spread = non_white_fraction(shot)
    assert non_white > 0.05 and spread > 20, (non_white, spread)  # text, tables and figures, not a blank page
    assert page.title().startswith(title)
    page.close()


def test_the_blank_check_would_catch_a_blank_page(browser, tmp_path):
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    page, _ = open_page(browser, blank.as_uri(), 1280)
    non_white, spread = non_white_fraction(page.screenshot())
    assert non_white == 0.0 and spread == 0.0
    page.close()


@pytest.mark.parametrize("which", PAGES)
def test_the_page_fits_a_phone_screen_without_sideways_scrolling(browser, which, request, tmp_path):
    """The page itself never scrolls sideways; a figure or table wider than the screen scrolls in its own box."""
    page, events = open_page(browser, request.getfixturevalue(PAGES[which][0]), PHONE_WIDTH, 844)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_WIDTH
    overflowing = page.evaluate("""Array.from(document.querySelectorAll('img, table'))
        .filter(e => e.getBoundingClientRect().right > innerWidth + 0.5)
        .map(e => { const box = e.closest('figure, .scroll'); const style = box && getComputedStyle(box);
                    return [e.tagName, box !== null && style.overflowX === 'auto'
                            && box.getBoundingClientRect().right <= innerWidth + 0.5
                            && style.backgroundImage.includes('gradient')]; })""")
    assert all(ok for _, ok in overflowing), overflowing  # each in a box that scrolls, with the edge shadows
    shot = page.screenshot()
    (tmp_path / "phone.png").write_bytes(shot)
    assert non_white_fraction(shot)[0] > 0.05
    assert events["console_errors"] == []
    page.close()


def test_the_page_prints_without_the_navigation_and_to_a_pdf(browser, report_url):
    page, _ = open_page(browser, report_url, 1280)
    page.emulate_media(media="print")
    assert page.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
    assert page.evaluate("getComputedStyle(document.querySelector('#curves h2')).breakBefore") == "page"
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type/Page") >= 5
    page.close()


