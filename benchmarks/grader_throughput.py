"""How fast the sandboxed grader is, for numpy and torch submissions apart: one submission alone, one
submission inside a batch, and 100 mixed submissions with --jobs 2.

Goals on the course's 2-core machine: a torch submission <= 1.5 s inside a batch (torch is imported
once per batch, by the warm server), 100 mixed submissions <= 40 s; question 2's module graded alone
<= 2 s, 100 modules with --jobs 2 <= 60 s.
Baselines, measured in the same run: the same grader with ``--isolation trusted`` (a plain child
process per submission, no namespaces), and the same checks with no sandbox at all, i.e. importing
each submission into this process and calling its functions on the same cases. The ratios say what
isolation costs.

The figures measured on the course's 2-core machine: benchmarks/README.md.

The intake (``grader.intake``: finding, safe reading, decoding, notebooks) is timed on its own, in this
process, for one numpy and one torch file, a notebook, and a 100-file batch folder (per submission), and
set against the grading time per submission of the same run (``--intake-only`` skips the grading runs).

    python benchmarks/grader_throughput.py [--rounds 5] [--count 100] [--jobs 2] [--out results.json] [--intake-only]

``--against CHECKOUT``: one correct numpy file graded alone (``python -m grader FILE``, as a student checks their
work) by this checkout and by CHECKOUT (another commit's worktree, same venv), alternating, ``--rounds`` each,
with the modules' bytecode kept (as installed) and as the environment says (PYTHONDONTWRITEBYTECODE); goal
<= 0.5 s for this checkout, compiled. Nothing else runs.

``--r-only``: question 1 written in R (tests/grader/corpora/r_corpus/correct_matrix.R) against the numpy file, in the
same run: one submission alone, and ``--count`` of each with ``--jobs``, in the namespaces mode.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
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

from grader import tolerance
from grader.functions.cases import all_cases
from grader.functions.contract import DEFAULT_SEED
from grader.intake import open_path
from grader.intake.finding import find
from mha.files import write_json

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "grader" / "corpora" / "submissions"
CORRECT = {"numpy": CORPUS / "correct_numpy.py", "torch": CORPUS / "correct_torch.py"}
NOTEBOOK = REPO / "tests" / "grader" / "corpora" / "handins" / "caderno.ipynb"
R_CORRECT = REPO / "tests" / "grader" / "corpora" / "r_corpus" / "correct_matrix.R"
MODES = ("namespaces", "trusted")
# A realistic class: right answers in three styles and every known mistake (no hostile code,
# whose timeouts would measure the timeout rather than the grader).
CLASS = sorted(CORPUS.glob("correct_*.py")) + sorted(CORPUS.glob("mistake_*.py"))
# Question 2: the module corpus (correct layouts and every module bug), graded on its own contract.
MODULES = sorted((REPO / "tests" / "grader" / "corpora" / "modules").glob("*.py"))
MODULE_ALONE = MODULES[0].with_name("correct_with_model.py")  # the most work: module and whole-model checks


def grade_cli(*args: str, root: Path = REPO, bytecode: Path | None = None) -> float:
    """Seconds one run of the grader's command line takes, the grader (and ``mha``) taken from ``root``;
    ``bytecode``: where Python keeps the compiled modules (as an installed package has them), else the
    environment's own setting (PYTHONDONTWRITEBYTECODE in a checkout: the grader's modules compiled on each run)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, check=False, cwd=root,
                          env=env)
    if proc.returncode == 2:
        raise SystemExit(f"the grader refused the command: {proc.stderr.strip()}")
    return time.perf_counter() - start


def batch_cli(files: list[Path], mode: str, jobs: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        for i, path in enumerate(files):
            shutil.copy(path, folder / f"student{i:03d}{path.suffix}")
        return grade_cli(str(folder), "--csv", str(Path(tmp) / "grades.csv"), "--jobs", str(jobs),
                         "--seed", str(DEFAULT_SEED + 1), "--isolation", mode)


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
        return tolerance.passes(got, want, tolerance.tolerance(case.function, case.args, case.kwargs, want))
    except Exception:  # noqa: BLE001 - a wrong submission is data here
        return False


def intake_cost(rounds: int, count: int) -> dict:
    """Seconds the intake takes per submission: one file alone, and each of ``count`` files in a batch folder."""
    figures = {}
    start = time.perf_counter()
    open_path(NOTEBOOK)
    figures["intake_notebook_first_s"] = time.perf_counter() - start  # nbformat and IPython imported once
    for kind, path in {**CORRECT, "notebook": NOTEBOOK}.items():
        figures[f"intake_{kind}_single_s"] = statistics.median(
            _timed(lambda p=path: open_path(p, siblings=True)) for _ in range(max(rounds, 5)))
    with tempfile.TemporaryDirectory() as tmp:
        for kind, path in CORRECT.items():
            folder = Path(tmp) / kind
            folder.mkdir()
            for i in range(count):
                shutil.copy(path, folder / f"student{i:03d}.py")
            total = statistics.median(_timed(lambda f=folder: [e.open() for e in find(f).entries])
                                      for _ in range(rounds))
            figures[f"intake_{kind}_batch_{count}_per_submission_s"] = total / count
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="repeats of each single timing (median reported)")
    parser.add_argument("--count", type=int, default=100, help="submissions in the mixed batch")
    parser.add_argument("--per-kind", type=int, default=10, help="submissions in each one-kind batch")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    parser.add_argument("--intake-only", action="store_true", help="time the intake alone, no grading runs")
    parser.add_argument("--r-only", action="store_true", help="time R submissions against numpy ones, nothing else")
    parser.add_argument("--against", type=Path, default=None,
                        help="another checkout: one file graded alone by each, alternating, nothing else")
    args = parser.parse_args()
    if args.against:
        figures = _alone_against(args)
        if args.out:
            write_json(args.out, figures)
        return 0 if figures["compiled"]["alone_s"] <= 0.5 else 1
    if args.r_only:
        figures = _r_against_numpy(args)
        if args.out:
            write_json(args.out, figures)
        return 0

    cases = all_cases()
    figures: dict = {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
                     "cases_per_submission": len(cases)}
    figures.update(intake_cost(args.rounds, args.count))
    print(f"intake per submission: numpy {1e3 * figures['intake_numpy_single_s']:.2f} ms alone, "
          f"{1e3 * figures[f'intake_numpy_batch_{args.count}_per_submission_s']:.2f} ms in a {args.count}-file batch; "
          f"torch {1e3 * figures['intake_torch_single_s']:.2f} ms alone, "
          f"{1e3 * figures[f'intake_torch_batch_{args.count}_per_submission_s']:.2f} ms in the batch; "
          f"a notebook {1e3 * figures['intake_notebook_single_s']:.2f} ms "
          f"(the first {1e3 * figures['intake_notebook_first_s']:.0f} ms, importing nbformat and IPython)")
    if args.intake_only:
        if args.out:
            write_json(args.out, figures)
        return 0
    for kind, path in CORRECT.items():
        in_process(path, cases)  # warm imports for the baseline (numpy, torch) so it is not charged for them
        base = statistics.median(_timed(lambda p=path: in_process(p, cases)) for _ in range(args.rounds))
        figures[f"{kind}_in_process_s"] = base
        for mode in MODES:
            alone = statistics.median(grade_cli(str(path), "--isolation", mode) for _ in range(args.rounds))
            batch = batch_cli([path] * args.per_kind, mode, args.jobs)
            figures[f"{kind}_{mode}_alone_s"] = alone
            figures[f"{kind}_{mode}_in_batch_s"] = batch / args.per_kind
        print(f"{kind}: alone {figures[f'{kind}_namespaces_alone_s']:.2f} s in namespaces, "
              f"{figures[f'{kind}_trusted_alone_s']:.2f} s trusted; in a batch of {args.per_kind} (--jobs {args.jobs}) "
              f"{figures[f'{kind}_namespaces_in_batch_s']:.2f} s each in namespaces, "
              f"{figures[f'{kind}_trusted_in_batch_s']:.2f} s trusted; in-process baseline {base:.3f} s")

    mixed = [CLASS[i % len(CLASS)] for i in range(args.count)]
    for mode in MODES:
        figures[f"mixed_{args.count}_{mode}_s"] = batch_cli(mixed, mode, args.jobs)
    figures[f"mixed_{args.count}_in_process_s"] = _timed(lambda: [in_process(p, cases) for p in mixed])
    ns, tr, ip = (figures[f"mixed_{args.count}_{m}_s"] for m in (*MODES, "in_process"))
    for kind in CORRECT:
        alone, batch = figures[f"{kind}_namespaces_alone_s"], figures[f"{kind}_namespaces_in_batch_s"]
        print(f"intake share of grading a {kind} submission: "
              f"{100 * figures[f'intake_{kind}_single_s'] / alone:.2f}% alone, "
              f"{100 * figures[f'intake_{kind}_batch_{args.count}_per_submission_s'] / batch:.2f}% in a batch")
    print(f"{args.count} mixed submissions ({sum('torch' in p.name for p in mixed)} torch), --jobs {args.jobs}: "
          f"{ns:.1f} s in namespaces (goal <= 40 s), {tr:.1f} s trusted (x{ns / tr:.2f}), "
          f"{ip:.1f} s in-process one after another (x{ns / ip:.1f})")
    module_ok = _modules(figures, args)
    if args.out:
        write_json(args.out, figures)
    ok = figures["torch_namespaces_in_batch_s"] <= 1.5 and ns <= 40.0 and module_ok
    return 0 if ok else 1


def _modules(figures: dict, args) -> bool:
    """Question 2: one module alone (goal <= 2 s wall) and 100 modules with --jobs 2 (goal <= 60 s);
    the baseline is question 1's torch submission alone, measured in the same run."""
    alone = statistics.median(grade_cli(str(MODULE_ALONE)) for _ in range(args.rounds))
    q1 = statistics.median(grade_cli(str(CORRECT["torch"])) for _ in range(args.rounds))
    many = [MODULES[i % len(MODULES)] for i in range(args.count)]
    batch = batch_cli(many, "namespaces", args.jobs)
    figures.update({"module_alone_s": alone, "module_alone_vs_q1_torch": alone / q1,
                    f"modules_{args.count}_namespaces_s": batch})
    print(f"question 2: one module (with the whole model) alone {alone:.2f} s (goal <= 2 s; x{alone / q1:.2f} "
          f"question 1's torch file); {args.count} modules --jobs {args.jobs}: {batch:.1f} s (goal <= 60 s)")
    return alone <= 2.0 and batch <= 60.0


def _alone_against(args) -> dict:
    """One correct numpy file graded alone by this checkout and by ``args.against``, alternating so that the
    machine's load falls on both alike, ``--rounds`` each: with the modules compiled once and kept, as a
    student's installed bundle has them (``compiled``), and as the environment says (``environment``: with
    PYTHONDONTWRITEBYTECODE set, as in this project's shells, the grader's modules compiled on every run). Every
    run and the medians."""
    path = str(CORRECT["numpy"])
    roots = {"this": REPO, "against": args.against.resolve()}
    figures: dict = {"against": str(args.against)}
    with tempfile.TemporaryDirectory() as caches:
        for condition in ("compiled", "environment"):
            bytecode = {name: Path(caches) / name if condition == "compiled" else None for name in roots}
            for name, root in roots.items():  # one run each first: the compiled modules written, the disk warm
                grade_cli(path, root=root, bytecode=bytecode[name])
            runs: dict[str, list[float]] = {name: [] for name in roots}
            for _ in range(args.rounds):
                for name, root in reversed(roots.items()):
                    runs[name].append(grade_cli(path, root=root, bytecode=bytecode[name]))
            medians = {name: statistics.median(times) for name, times in runs.items()}
            figures[condition] = {"alone_s": medians["this"], "against_alone_s": medians["against"], "runs": runs}
            print(f"one numpy file alone, modules {condition}: this checkout {medians['this']:.2f} s (goal <= 0.5 s;"
                  f" runs {', '.join(f'{t:.2f}' for t in runs['this'])}), {args.against} {medians['against']:.2f} s "
                  f"(runs {', '.join(f'{t:.2f}' for t in runs['against'])})")
    return figures


def _r_against_numpy(args) -> dict:
    """Seconds per submission for the R file and the numpy file: alone (median of rounds), and in a batch
    of ``count`` of each kind with ``jobs``; the numpy figures are this run's baseline."""
    figures = {}
    for kind, path in (("numpy", CORRECT["numpy"]), ("r", R_CORRECT)):
        figures[f"{kind}_alone_s"] = statistics.median(grade_cli(str(path)) for _ in range(args.rounds))
        figures[f"{kind}_batch_{args.count}_s"] = batch_cli([path] * args.count, "namespaces", args.jobs)
    n = args.count
    print(f"alone: R {figures['r_alone_s']:.2f} s, numpy {figures['numpy_alone_s']:.2f} s "
          f"(x{figures['r_alone_s'] / figures['numpy_alone_s']:.2f}); {n} of each, --jobs {args.jobs}: "
          f"R {figures[f'r_batch_{n}_s']:.1f} s ({figures[f'r_batch_{n}_s'] / n:.2f} s each), "
          f"numpy {figures[f'numpy_batch_{n}_s']:.1f} s ({figures[f'numpy_batch_{n}_s'] / n:.2f} s each; "
          f"x{figures[f'r_batch_{n}_s'] / figures[f'numpy_batch_{n}_s']:.2f})")
    return figures


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    raise SystemExit(main())
