"""Stages train_attention and train_no_attention: train the character GPT with or without attention."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mha import machine, schema, train
from mha.artifacts.layout import RunFiles
from mha.artifacts.run import CURVE_COLUMNS
from mha.artifacts.runlog import run_log_path
from mha.stage import REFUSALS, refuse, say

MODEL = {"on": "attention", "off": "no attention"}  # --attention, as the results name it


def main(argv: list[str] | None = None) -> int:
    machine.flush_denormals()  # before any torch work starts the thread pool; the run record says if it took
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"),
                        help="reads its data:, model: and train: sections")
    parser.add_argument("--attention", choices=("on", "off"), required=True,
                        help="off: every block is only x + FFN(LN(x))")
    parser.add_argument("--data", type=Path, required=True, help="the corpus (fetch_data's output)")
    parser.add_argument("--metrics", type=Path, required=True)
    parser.add_argument("--plot", type=Path, required=True, help=f"CSV: {','.join(CURVE_COLUMNS)}")
    parser.add_argument("--model", type=Path, required=True, help="checkpoint; resumed from when config and data match")
    parser.add_argument("--config", type=Path, required=True,
                        help="the run record (JSON): config, data, versions; every result at the end "
                             "(wall time, speed and CPU go to its run log, runs/<this path>)")
    parser.add_argument("--sample", type=Path, required=True, help="generated text")
    parser.add_argument("--attention-weights", type=Path, default=None, help="heat-map data (attention model only)")
    parser.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    args = parser.parse_args(argv)
    try:
        run = schema.resolve(schema.load(args.params, "data", "model", "train"), attention=args.attention == "on")
        corpus = train.Corpus.load(args.data, run.data)
        files = RunFiles(metrics=args.metrics, plot=args.plot, model=args.model, record=args.config,
                         sample=args.sample, attention=args.attention_weights, run_log=run_log_path(args.config))
        trained = train.train(run, corpus, files, train.setup(run.train), data_path=str(args.data),
                              progress=not args.no_progress)
    except REFUSALS as exc:
        return refuse("train", exc)
    results, log = trained.results, trained.log
    say("train", f"{MODEL[args.attention]}: best val loss {results.best_val_loss:.4f}, final "
                 f"{results.final_val_loss:.4f}, {results.iterations} steps in {log.wall_seconds:.0f} s "
                 f"({log.tokens_per_second:,.0f} tokens/s; this machine's figures, in {files.run_log})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
