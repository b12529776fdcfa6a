"""What the report's two pages share (besides their config, mha.schema.ReportConfig): their Jinja2 environment,
how a figure travels in a page, and their file names, by which they link to each other."""

from __future__ import annotations

from pathlib import Path

import jinja2

from mha.report.figures import data_uri

# The two pages lie side by side (dvc.yaml's path.report and path.lab_report) and link to each other.
REPORT_PAGE = "index.html"
LAB_PAGE = "lab.html"


def environment(template_dir: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir)),
        autoescape=True,  # every value is escaped unless it is Markup built by pandas or here
        undefined=jinja2.StrictUndefined,  # a misspelt variable fails the render instead of printing nothing
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def figure(svg: bytes, alt: str, caption: str | None = None) -> dict:
    return {"src": data_uri(svg), "alt": alt, "caption": caption}
