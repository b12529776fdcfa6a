"""`make exp-show`: `dvc exp show` cut to what compares experiments, in at most 120 columns.

DVC's own table has every dependency hash and names each metric by its file (`metrics/train_attention.json:
best_val_loss`), so at 120 columns every cell is `…`. This keeps the experiment, the params a sweep changes and
the two main runs' best validation loss, names each by its run (`attention`, `no_attention`), and prints
DVC's CSV as aligned columns.

    python scripts/exp_show.py [more `dvc exp show` arguments, e.g. -A]
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys

KEEP = r"Experiment|rev|train\.lr|train\.max_iters|model\.dropout|metrics/train_.*:best_val_loss"
METRIC = re.compile(r"^metrics/(.+)\.json:best_val_loss$")


def table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    proc = subprocess.run(["dvc", "exp", "show", "--no-pager", "--csv", "--drop", ".*", "--keep", KEEP, *args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return proc.returncode
    rows = list(csv.reader(io.StringIO(proc.stdout)))
    if not rows:
        return 0
    # a metric named by its run: "attention", "no_attention" (each run's best validation loss)
    rows[0] = [METRIC.sub(r"\1", name).replace("train_", "", 1) if METRIC.match(name) else name for name in rows[0]]
    # the metrics to 4 decimals, as DVC's own table shows them
    metric_columns = [i for i, name in enumerate(rows[0]) if name.endswith("attention")]
    for row in rows[1:]:
        for i in metric_columns:
            row[i] = f"{float(row[i]):.4f}" if row[i] else "-"
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
