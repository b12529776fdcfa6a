"""`make pages`, after a full reproduction: the committed pages (docs/pages) and their screenshots (docs/screenshots).

1. Copies reports/index.html and reports/lab.html to docs/pages/, where a fresh clone opens them without training.
2. Renders both pages in both languages (the `report` and `lab_report` stages' own commands from dvc.lock, with
   params.yaml's report.language replaced, into a temp folder) and, in headless /usr/bin/chromium through
   Playwright, writes docs/screenshots/{report,lab}-{en,pt}-{1280,390}-N.jpg (the full page, in parts).
3. Checks every rendering at both widths: no table column clipped (a cell's text wider than its cell, or a table or
   figure running past the screen outside a box that scrolls), no text of the page or of a figure under 10 px.
   Exits 1 naming each problem; each committed file must stay under 512 KiB.

    python scripts/pages.py
"""

from __future__ import annotations

import base64
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
PAGES = {"report": "index.html", "lab": "lab.html"}  # name in docs/screenshots: file in reports/ and docs/pages/
STAGES = {"report": "report", "lab": "lab_report"}
LANGUAGES = ("en", "pt")
WIDTHS = (1280, 390)
MIN_TEXT_PX = 10
MAX_BYTES = 512 * 1024
SHOT_HEIGHT = 2400  # px per screenshot file: a long page comes in parts, each well under MAX_BYTES
CHROMIUM = "/usr/bin/chromium"

# Every table cell whose text is wider than the cell, and every table or figure that runs past the screen
# without a box that scrolls it; the smallest font-size of any visible text of the page itself.
LAYOUT_JS = """() => {
  const clipped = Array.from(document.querySelectorAll('th, td'))
    .filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.trim().slice(0, 40));
  const loose = Array.from(document.querySelectorAll('img, table'))
    .filter(e => e.getBoundingClientRect().right > innerWidth + 0.5)
    .filter(e => { const box = e.closest('figure, .scroll');
                   return !box || getComputedStyle(box).overflowX !== 'auto'
                          || box.getBoundingClientRect().right > innerWidth + 0.5; })
    .map(e => e.tagName + ' ' + (e.alt || e.textContent).trim().slice(0, 40));
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let smallest = Infinity, where = '';
  while (walker.nextNode()) {
    const node = walker.currentNode, parent = node.parentElement;
    if (!node.textContent.trim() || !parent.getClientRects().length) continue;
    const size = parseFloat(getComputedStyle(parent).fontSize);
    if (size < smallest) { smallest = size; where = node.textContent.trim().slice(0, 40); }
  }
  const images = Array.from(document.images).map(i => [i.src, i.getBoundingClientRect().width]);
  return {clipped, loose, smallest, where, images};
}"""


def smallest_figure_text_pt(svg: str) -> tuple[float, float]:
    """(smallest text in points, viewBox width in points) of a matplotlib SVG whose glyphs are paths.

    matplotlib draws a text as glyph paths under `scale(s -s)`, with s = font size / 100.
    """
    width = float(re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) [\d.]+"', svg)[1])
    scales = [float(s) * 100 for s in re.findall(r"scale\(([\d.]+) -[\d.]+\)", svg)]
    return (min(scales) if scales else float("inf")), width


def figure_problems(images: list[list], label: str) -> list[str]:
    problems = []
    for k, (src, shown) in enumerate(images, start=1):
        if not src.startswith("data:image/svg+xml;base64,"):
            continue
        svg = base64.b64decode(src.split(",", 1)[1]).decode("utf-8")
        points, width = smallest_figure_text_pt(svg)
        px = points * shown / width
        if px < MIN_TEXT_PX - 0.05:
            problems.append(f"{label}: figure {k}'s smallest text is {px:.1f} px (shown {shown:.0f} px wide)")
    return problems


def stage_command(stage: str) -> list[str]:
    lock = yaml.safe_load((REPO / "dvc.lock").read_text())
    return shlex.split(lock["stages"][stage]["cmd"])


def render(page: str, language: str, tmp: Path) -> Path:
    """The page in ``language``: its stage's command with params.yaml's language replaced, into ``tmp``."""
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["report"]["language"] = language
    params_file = tmp / f"params-{language}.yaml"
    params_file.write_text(yaml.safe_dump(params, sort_keys=False))
    out = tmp / language / PAGES[page]  # both pages of a language side by side, so that their links work
    cmd = stage_command(STAGES[page])
    cmd[cmd.index("--out") + 1] = str(out)
    cmd[0] = sys.executable
    subprocess.run([*cmd, "--params", str(params_file)], cwd=REPO, check=True, timeout=600)
    return out


def screenshots(view, folder: Path, label: str) -> list[Path]:
    """The whole page, top to bottom, in parts of SHOT_HEIGHT px: LABEL-1.jpg, LABEL-2.jpg, ..."""
    for old in folder.glob(f"{label}-*.jpg"):
        old.unlink()
    height = view.evaluate("document.documentElement.scrollHeight")
    width = view.viewport_size["width"]
    shots = []
    for part, top in enumerate(range(0, height, SHOT_HEIGHT), start=1):
        clip = {"x": 0, "y": top, "width": width, "height": min(SHOT_HEIGHT, height - top)}
        shot = folder / f"{label}-{part}.jpg"
        shot.write_bytes(view.screenshot(full_page=True, clip=clip, type="jpeg", quality=80))
        shots.append(shot)
    return shots


def main() -> int:
    missing = [f"reports/{f}" for f in PAGES.values() if not (REPO / "reports" / f).exists()]
    if missing:
        print(f"pages: {', '.join(missing)} missing: run `make repro` first", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    pages_dir, shots_dir = REPO / "docs" / "pages", REPO / "docs" / "screenshots"
    pages_dir.mkdir(parents=True, exist_ok=True)
    shots_dir.mkdir(parents=True, exist_ok=True)
    for name in PAGES.values():
        shutil.copyfile(REPO / "reports" / name, pages_dir / name)
        print(f"pages: docs/pages/{name}", flush=True)
    with tempfile.TemporaryDirectory() as tmp_name, sync_playwright() as playwright:
        tmp = Path(tmp_name)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        for page_name in PAGES:
            for language in LANGUAGES:
                html = render(page_name, language, tmp)
                for width in WIDTHS:
                    label = f"{page_name}-{language}-{width}"
                    view = browser.new_page(viewport={"width": width, "height": 900})
                    view.goto(html.as_uri(), wait_until="load")
                    layout = view.evaluate(LAYOUT_JS)
                    problems += [f"{label}: column clipped: {text!r}" for text in layout["clipped"]]
                    problems += [f"{label}: runs off the screen: {text!r}" for text in layout["loose"]]
                    if layout["smallest"] < MIN_TEXT_PX:
                        problems.append(f"{label}: text of {layout['smallest']} px: {layout['where']!r}")
                    problems += figure_problems(layout["images"], label)
                    for shot in screenshots(view, shots_dir, label):
                        print(f"pages: {shot.relative_to(REPO)}", flush=True)
                    view.close()
        browser.close()
    for path in [*pages_dir.iterdir(), *shots_dir.iterdir()]:
        if path.stat().st_size > MAX_BYTES:
            problems.append(f"{path.relative_to(REPO)} is {path.stat().st_size // 1024} KiB, over 512 KiB")
    for problem in problems:
        print(f"pages: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
