"""Stage lab_report: render reports/lab.html, the course's questions answered from the lab's runs.

Reads params.yaml: the run names from lab.runs and their seeds from lab.seeds, the language from the report
section. The lab's folders come from dvc.yaml on the command line; each run's files lie where mha.lab.layout
puts them. The page is rendered completely in memory and then written atomically, so a bad input leaves any
previous page untouched and writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mha import schema
from mha.lab.arguments import add_folder_arguments, lab_folders
from mha.lab.page.inputs import load_lab
from mha.lab.page.render import render_lab_page
from mha.report.publish import publish

ROOT = Path(__file__).resolve().parents[1]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__)
    add_folder_arguments(parser)
    parser.add_argument("--out", type=Path, required=True, help="where to write the HTML page")
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--templates", type=Path, default=ROOT / "pipeline" / "templates")
    return parser


def render(args: argparse.Namespace) -> tuple[str, str]:
    """The page and its language."""
    values = schema.load(args.params, "report", "lab")
    config, lab = schema.report_config(values), schema.LabConfig.from_params(values)
    return render_lab_page(load_lab(lab_folders(args), list(lab.runs), list(lab.seeds)),
                           args.templates, config), config.language


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return publish("lab_report", args.out, args.templates, lambda: render(args))


if __name__ == "__main__":
    sys.exit(main())
