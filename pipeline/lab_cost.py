"""Stage lab_cost: what one attention layer of the model costs in memory, operations and time as the sequence
grows (lab.cost in params.yaml; the layer is model:'s, the device and threads train:'s); no training. The times
are this machine's: they go to the run log of --out (runs/...), git-ignored, and are printed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mha import machine, schema
from mha.artifacts.runlog import run_log_path
from mha.files import write_json
from mha.lab.cost import ATTENTION_COST, COST_TIMES, cost_metrics, time_metrics
from mha.lab.measure_cost import attention_cost
from mha.stage import REFUSALS, refuse, say
from mha.train import setup


def main(argv: list[str] | None = None) -> int:
    machine.flush_denormals()  # as the training stages: the same arithmetic as the model trains with
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"),
                        help="reads its model:, train: and lab: sections")
    parser.add_argument("--out", type=Path, required=True, help="the measurements (JSON)")
    parser.add_argument("--metrics", type=Path, required=True, help="the fitted exponents (JSON)")
    args = parser.parse_args(argv)
    try:
        values = schema.load(args.params, "model", "train", "lab")
        cost = schema.LabConfig.from_params(values).cost
        run = schema.resolve(values)
        device = setup(run.train)
        measured, times = attention_cost(run.model, lengths=cost.lengths, batch=cost.batch, repeats=cost.repeats,
                                         seed=cost.seed, device=device, progress=lambda line: say("lab_cost", line))
    except REFUSALS as exc:
        return refuse("lab_cost", exc)
    ATTENTION_COST.write(args.out, measured)
    metrics = cost_metrics(measured)
    write_json(args.metrics, metrics)
    log = run_log_path(args.out)
    COST_TIMES.write(log, times)
    say("lab_cost", f"wrote {args.out} and {args.metrics}: operations ∝ T^{metrics['work']['flops_exponent_long']:.2f}"
                    ", memory kept " + ", ".join(f"{k.kernel} ∝ T^{metrics[k.kernel]['memory_exponent_long']:.2f}"
                                                 for k in measured.kernels) + " at the longest lengths")
    say("lab_cost", f"this machine's times ({times.device}, {times.threads} threads; in {log}): " + "; ".join(
        f"{kernel} ∝ T^{m['time_exponent_long']:.2f} at the longest lengths (T^{m['time_exponent']:.2f} over all), "
        f"{m['ms_longest']:.0f} ms at T = {times.lengths[-1]}, {m['quadratic_share_longest']:.0%} of it in the T² "
        "part" for kernel, m in time_metrics(measured, times).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
