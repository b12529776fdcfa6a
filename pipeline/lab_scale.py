"""Stage lab_scale: the statistics of the 1/√d_k scale on random vectors (lab.scale in params.yaml); no training."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mha import schema
from mha.artifacts.lab import SCALE_STATISTICS
from mha.lab.arguments import add_folder_arguments, lab_folders
from mha.lab.scale import scale_statistics
from mha.stage import REFUSALS, refuse, say


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"), help="reads its lab: section")
    add_folder_arguments(parser)
    args = parser.parse_args(argv)
    out = lab_folders(args).scale
    try:
        statistics = scale_statistics(**schema.LabConfig.from_params(schema.load(args.params, "lab")).scale)
    except (*REFUSALS, TypeError) as exc:  # TypeError: a lab.scale value of a wrong type
        return refuse("lab_scale", f"nothing written: {exc}")
    SCALE_STATISTICS.write(out, statistics)
    say("lab_scale", f"wrote {out}: the scale's statistics for {len(statistics.d_k)} values of d_k, "
                     f"{statistics.d_k[0]} to {statistics.d_k[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
