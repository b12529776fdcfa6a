"""Stage lab_train@NAME-SEED: one controlled run of the lab (lab.runs.NAME in params.yaml) with one of lab.seeds,
trained on the lab's schedule, with its order sensitivity measured at the end."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from mha import machine
from mha.artifacts.lab import ORDER_SENSITIVITY
from mha.lab.arguments import add_folder_arguments, lab_folders
from mha.lab.runs import LabConfig, lab_run_config
from mha.lab.train_run import train_lab_run
from mha.stage_messages import tell
from mha.train import Corpus


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
        params = yaml.safe_load(args.params.read_text())
        run = lab_run_config(params, args.run, args.seed)
        order = LabConfig.from_params(params).order
        corpus = Corpus.load(args.data, run.data)
        results = train_lab_run(run, corpus, files, order, data_path=str(args.data), progress=not args.no_progress)
    except (ValueError, OSError, yaml.YAMLError) as exc:
        tell("lab_train", exc)
        return 2
    ORDER_SENSITIVITY.write(files.order, results.order)
    training, log = results.training.results, results.training.log
    tell("lab_train", "lab_train.done", file=sys.stdout, run=args.run, seed=args.seed, best=training.best_val_loss,
         steps=training.iterations, seconds=log.wall_seconds, speed=log.tokens_per_second, log=files.run_log,
         gap=results.order.gap)
    return 0


if __name__ == "__main__":
    sys.exit(main())
