"""Stage lab_train@NAME-SEED: one controlled run of the lab (lab.runs.NAME in params.yaml) with one of lab.seeds,
trained on the lab's schedule (lab.schedule; on a GPU, the main run's whole schedule), with its order sensitivity
measured at the end. The run record (models/lab/NAME/SEED.json) names the schedule it was trained on."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mha import machine, schema
from mha.artifacts.lab import ORDER_SENSITIVITY
from mha.lab.arguments import add_folder_arguments, lab_folders
from mha.lab.runs import lab_run_config
from mha.lab.train_run import train_lab_run
from mha.stage import REFUSALS, refuse, say
from mha.train import Corpus, setup


def main(argv: list[str] | None = None) -> int:
    machine.flush_denormals()  # before any torch work starts the thread pool; the run record says if it took
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"),
                        help="reads its data:, model:, train: and lab: sections")
    parser.add_argument("--run", required=True, help="the run's name in lab.runs")
    parser.add_argument("--seed", type=int, required=True, help="one of lab.seeds: the run's train.seed")
    parser.add_argument("--data", type=Path, required=True, help="the corpus (fetch_data's output)")
    add_folder_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    args = parser.parse_args(argv)
    files = lab_folders(args).run(args.run, args.seed)
    try:
        values = schema.load(args.params, "data", "model", "train", "lab")
        run = lab_run_config(values, args.run, args.seed)
        device = setup(run.train)
        if device.type == "cuda":  # seconds on a GPU: the main run's whole schedule, not the lab's shorter one
            run = lab_run_config(values, args.run, args.seed, full_schedule=True)
        order = schema.LabConfig.from_params(values).order
        corpus = Corpus.load(args.data, run.data)
        results = train_lab_run(run, corpus, files, order, device, data_path=str(args.data),
                                progress=not args.no_progress)
    except REFUSALS as exc:
        return refuse("lab_train", exc)
    ORDER_SENSITIVITY.write(files.order, results.order)
    training, log = results.training.results, results.training.log
    say("lab_train", f"run {args.run}, seed {args.seed}: best validation loss {training.best_val_loss:.4f} nats/char "
                     f"after {training.iterations} steps in {log.wall_seconds:.0f} s ({log.tokens_per_second:,.0f} "
                     f"tokens/s, in {files.run_log}); order is worth {results.order.gap:.4f} nats/char to it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
