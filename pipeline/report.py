"""Stage report: render reports/index.html from the training runs, the worked example and the corpus.

Reads its `report` section of params.yaml; the split of the corpus comes from the runs' records. Every
path comes from dvc.yaml on the command line. The page is rendered completely in memory and then written
atomically, so a bad input leaves any previous report untouched.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path

from mha import schema
from mha.report.inputs import ReportPaths, RunPaths, load_inputs
from mha.report.publish import publish
from mha.report.render import render_report
from mha.report.runfacts import collect

ROOT = Path(__file__).resolve().parents[1]


RUN_PREFIXES = ("attention", "no-attention")  # --attention-plots ... --no-attention-config: fields of RunPaths


def run_paths(args: argparse.Namespace, prefix: str) -> RunPaths:
    return RunPaths(**{f.name: getattr(args, f"{prefix}_{f.name}") for f in fields(RunPaths)})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__)
    for prefix in RUN_PREFIXES:
        for f in fields(RunPaths):
            parser.add_argument(f"--{prefix}-{f.name}", type=Path, required=True,
                                help=f"the train_{prefix.replace('-', '_')} stage's {f.name} file")
    parser.add_argument("--attention-weights", type=Path, required=True, help="attention maps on the excerpt")
    parser.add_argument("--worked-example-matrices", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True, help="the raw corpus, for the count baselines")
    parser.add_argument("--out", type=Path, required=True, help="where to write the HTML page")
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--templates", type=Path, default=ROOT / "pipeline" / "templates")
    return parser


def report_paths(args: argparse.Namespace) -> ReportPaths:
    """The stage's inputs, as its command line names them."""
    return ReportPaths(
        attention=run_paths(args, "attention"),
        no_attention=run_paths(args, "no_attention"),
        attention_weights=args.attention_weights,
        worked_example_matrices=args.worked_example_matrices,
        corpus=args.corpus,
    )


def render(args: argparse.Namespace) -> tuple[str, str]:
    """The page and its language."""
    config = schema.report_config(schema.load(args.params, "report"))
    inputs = load_inputs(report_paths(args))
    # Run facts come from the inputs and the checkout (git commit hash and commit date), never from the
    # clock, so the same inputs at the same commit give a byte-identical page.
    return render_report(inputs, collect(inputs.attention.record, ROOT), args.templates, config), config.language


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return publish("report", args.out, args.templates, lambda: render(args))


if __name__ == "__main__":
    sys.exit(main())
