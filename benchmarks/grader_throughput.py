"""How fast the sandboxed grader is: one correct submission, and 100 submissions with --jobs 2.

Goals on the course's 2-core machine: one submission <= 2 s, 100 submissions <= 60 s.
Baseline, measured in the same run: the same checks without a sandbox, i.e. importing each
submission into this process and calling its functions on the same cases (what Gradescope's
samples do). The ratios say what isolation costs.

    python benchmarks/grader_throughput.py [--rounds 5] [--count 100] [--jobs 2] [--out results.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from grader.cases import all_cases
from grader.checks import ATOL, RTOL
from mha.files import write_json

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "grader" / "submissions"
CORRECT = CORPUS / "correct_numpy.py"
# A realistic class: right answers in three styles and every known mistake (no hostile code,
# whose timeouts would measure the timeout rather than the grader).
CLASS = sorted(CORPUS.glob("correct_*.py")) + sorted(CORPUS.glob("mistake_*.py"))


def grade_cli(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, check=False, cwd=REPO)
    return time.perf_counter() - start


def in_process(path: Path, cases) -> int:
    """The baseline: import the submission here and call it on every case, no isolation at all."""
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}_{time.perf_counter_ns()}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    passed = 0
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            passed += _check(module, case)
    return passed


def _check(module, case) -> bool:
    try:
        got = getattr(module, case.function)(*case.args, **case.kwargs)
        if hasattr(got, "detach"):
            got = got.detach()
        got = np.asarray(got, dtype=np.float64)
        want = case.reference_output()
        return bool(got.shape == want.shape and np.allclose(got, want, rtol=RTOL, atol=ATOL))
    except Exception:  # noqa: BLE001 - a wrong submission is data here
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="repeats of the one-submission timing (median reported)")
    parser.add_argument("--count", type=int, default=100, help="submissions in the batch timing")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    args = parser.parse_args()

    cases = all_cases()
    in_process(CORRECT, cases)  # warm imports for the baseline (numpy, torch) so it is not charged for them
    one = [grade_cli(str(CORRECT)) for _ in range(args.rounds)]
    base_one = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        in_process(CORRECT, cases)
        base_one.append(time.perf_counter() - start)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        for i in range(args.count):
            shutil.copy(CLASS[i % len(CLASS)], folder / f"student{i:03d}.py")
        batch = grade_cli(str(folder), "--csv", str(Path(tmp) / "grades.csv"), "--jobs", str(args.jobs))
        start = time.perf_counter()
        for path in sorted(folder.glob("*.py")):
            in_process(path, cases)
        base_batch = time.perf_counter() - start

    figures = {
        "one_submission_s": statistics.median(one),
        "one_submission_goal_s": 2.0,
        "baseline_in_process_one_s": statistics.median(base_one),
        "one_submission_ratio_vs_in_process": statistics.median(one) / statistics.median(base_one),
        "batch_count": args.count,
        "batch_jobs": args.jobs,
        "batch_s": batch,
        "batch_goal_s": 60.0,
        "baseline_in_process_batch_s": base_batch,
        "batch_ratio_vs_in_process": batch / base_batch,
        "cases_per_submission": len(cases),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": __import__("os").cpu_count(),
    }
    print(f"one correct submission (python -m grader, fresh interpreter): {figures['one_submission_s']:.2f} s "
          f"(goal <= 2 s; median of {args.rounds})")
    print(f"  baseline, in-process import + call of the same {len(cases)} checks: "
          f"{figures['baseline_in_process_one_s']:.3f} s "
          f"-> sandbox costs x{figures['one_submission_ratio_vs_in_process']:.1f}")
    print(f"{args.count} submissions, --jobs {args.jobs}: {batch:.1f} s (goal <= 60 s)")
    print(f"  baseline, in-process, one after another: {base_batch:.1f} s "
          f"-> x{figures['batch_ratio_vs_in_process']:.1f}")
    if args.out:
        write_json(args.out, figures)
    ok = figures["one_submission_s"] <= 2.0 and batch <= 60.0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
