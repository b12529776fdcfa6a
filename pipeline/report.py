"""Stage report: render reports/index.html from the training runs, the worked example and the corpus.

Reads its `report` section of params.yaml (and the split's data.val_fraction); every path comes from
dvc.yaml on the command line. The page is rendered completely in memory and then written atomically,
so a bad input leaves any previous report untouched.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jinja2
import yaml

from mha.files import atomic_write_text
from mha.report.inputs import ReportInputError, ReportPaths, RunPaths, load_inputs
from mha.report.messages import check_language
from mha.report.render import render_report
from mha.report.runfacts import collect
from mha.stage_messages import CATALOG, tell

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = {"language": "en", "bigram_k": 0.1}
DEFAULT_VAL_FRACTION = 0.1  # mha.data.split_text's default, if params.yaml has no data section


def read_params(path: Path) -> tuple[dict, float]:
    try:
        params = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise CATALOG.error("report.params_missing", path=path) from None
    except yaml.YAMLError as exc:
        raise CATALOG.error("report.params_not_yaml", path=path, error=str(exc).splitlines()[0]) from None
    report = {**DEFAULTS, **(params.get("report") or {})}
    unknown = sorted(set(report) - set(DEFAULTS))
    if unknown:
        raise CATALOG.error("report.unknown_keys", unknown=unknown, allowed=sorted(DEFAULTS))
    try:
        check_language(report["language"])
    except ValueError as exc:
        raise ReportInputError(str(exc)) from None
    k = report["bigram_k"]
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
        raise CATALOG.error("report.bad_add_k", value=repr(k))
    val_fraction = (params.get("data") or {}).get("val_fraction", DEFAULT_VAL_FRACTION)
    return report, float(val_fraction)


def run_paths(args: argparse.Namespace, prefix: str) -> RunPaths:
    return RunPaths(plots=getattr(args, f"{prefix}_plots"), samples=getattr(args, f"{prefix}_samples"),
                    config=getattr(args, f"{prefix}_config"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    for prefix in ("attention", "no-attention"):
        for what in ("plots", "samples", "config"):
            parser.add_argument(f"--{prefix}-{what}", type=Path, required=True,
                                help=f"the train_{prefix.replace('-', '_')} stage's {what} file")
    parser.add_argument("--attention-weights", type=Path, required=True, help="attention maps on the excerpt")
    parser.add_argument("--worked-example-matrices", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True, help="the raw corpus, for the count baselines")
    parser.add_argument("--out", type=Path, required=True, help="where to write the HTML page")
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--templates", type=Path, default=ROOT / "pipeline" / "templates")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    try:
        report, val_fraction = read_params(args.params)
        inputs = load_inputs(ReportPaths(
            attention=run_paths(args, "attention"),
            no_attention=run_paths(args, "no_attention"),
            attention_weights=args.attention_weights,
            worked_example_matrices=args.worked_example_matrices,
            corpus=args.corpus,
        ))
        # Run facts come from the inputs and the checkout (git commit hash and commit date), never from the
        # clock, so the same inputs at the same commit give a byte-identical page.
        html = render_report(inputs, collect(inputs.attention.config, ROOT), args.templates,
                             language=report["language"], val_fraction=val_fraction, add_k=report["bigram_k"])
    except (ReportInputError, ValueError) as exc:
        tell("report", exc)
        tell("report", "report.nothing_written", path=args.out)
        return 2
    except (jinja2.TemplateError, OSError) as exc:  # a missing or broken template
        tell("report", "report.template_broken", folder=args.templates, error=f"{type(exc).__name__}: {exc}")
        tell("report", "report.nothing_written", path=args.out)
        return 2
    atomic_write_text(args.out, html)
    size = len(html.encode("utf-8"))
    print(f"report: wrote {args.out} ({size / 1024:.0f} KiB, {report['language']}) "
          f"in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
