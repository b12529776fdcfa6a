"""Stage lab_scale: the statistics of the 1/√d_k scale on random vectors (lab.scale in params.yaml); no training."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from mha.artifacts.lab import SCALE_STATISTICS
from mha.lab.arguments import add_folder_arguments, lab_folders
from mha.lab.runs import LabConfig
from mha.lab.scale import scale_statistics
from mha.stage_messages import tell


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"), help="reads its lab: section")
    add_folder_arguments(parser)
    args = parser.parse_args(argv)
    out = lab_folders(args).scale
    try:
        statistics = scale_statistics(**LabConfig.from_params(yaml.safe_load(args.params.read_text())).scale)
    except (ValueError, TypeError, OSError, yaml.YAMLError) as exc:  # TypeError: a lab.scale value of a wrong type
        tell("lab_scale", "lab_scale.refused", error=exc)
        return 2
    SCALE_STATISTICS.write(out, statistics)
    tell("lab_scale", "lab_scale.done", file=sys.stdout, path=out, count=len(statistics.d_k), first=statistics.d_k[0],
         last=statistics.d_k[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
