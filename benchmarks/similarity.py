"""How well the class page's similarity tells copies from independent hand-ins, on a class written for it.

    .venv/bin/python benchmarks/similarity.py [--dolos DIR]

The class (``benchmarks/similarity_class.py``): 40 independent Python hand-ins of question 1 and 8 disguised
copies, 16 independent R hand-ins and 4 R copies, scored together (R is compared with R only). Reports, at the
default threshold, the independent pairs flagged and the copies found, and the average precision over the
whole ranking (every pair; a pair never scored ranks last); exits 1 unless each class meets the bar
(no independent pair flagged, every copy but one, average precision at least 0.95).
With ``--dolos DIR`` (a folder where ``npm install @dodona/dolos-lib@3.5.1`` was run) Dolos scores the same
Python class for comparison.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import similarity_class  # noqa: E402

from grader.classpage import similarity  # noqa: E402


def average_precision(scores: dict[tuple[str, str], float], positives: set[frozenset]) -> float:
    """Average precision of the ranking by score (ties broken against the copies: the worst order)."""
    ranked = sorted(scores, key=lambda pair: (-scores[pair], frozenset(pair) in positives))
    found, total = 0, 0.0
    for rank, pair in enumerate(ranked, 1):
        if frozenset(pair) in positives:
            found += 1
            total += found / rank
    return total / len(positives)


def scored(files: dict[str, tuple[str, str]]) -> dict[tuple[str, str], float]:
    codes = {name: similarity.Code(source, language) for name, (language, source) in files.items()}
    got = {(p.first, p.second): p.score for p in similarity.ranking(codes)}
    return {pair: got.get(pair, 0.0) for pair in combinations(sorted(files), 2)
            if files[pair[0]][0] == files[pair[1]][0]}


def report(label: str, scores: dict, positives: set[frozenset], threshold: float) -> dict:
    flagged = {frozenset(p) for p, s in scores.items() if s >= threshold}
    false = sorted(tuple(sorted(p)) for p in flagged - positives)
    found = len(flagged & positives)
    ap = average_precision(scores, positives)
    ranks = sorted(scores, key=lambda pair: -scores[pair])
    where = {p: ranks.index(p) + 1 for p in ranks if frozenset(p) in positives}
    print(f"{label}: {len(scores)} pairs; at {threshold:g}: {found} of {len(positives)} copies flagged, "
          f"{len(false)} independent pairs flagged{' ' + str(false) if false else ''}; average precision {ap:.3f}")
    for pair, rank in sorted(where.items(), key=lambda kv: kv[1]):
        print(f"    {pair[0]:<18} {pair[1]:<18} rank {rank:>4}  score {scores[pair]:.3f}")
    top_independent = max((s for p, s in scores.items() if frozenset(p) not in positives), default=0.0)
    print(f"    highest independent pair: {top_independent:.3f}")
    return {"flagged_copies": found, "copies": len(positives), "false_pairs": len(false), "ap": ap}


def dolos(folder: Path, files: dict[str, tuple[str, str]], positives: set[frozenset], threshold: float) -> None:
    """Dolos 3.5.1 on the same Python files: its similarity, and with fragments in more than 10% of files ignored."""
    script = folder / "score.mjs"
    script.write_text(
        "import { Dolos } from '@dodona/dolos-lib';\n"
        "const [, , maxFraction, ...paths] = process.argv;\n"
        "const options = maxFraction === 'none' ? {} : { maxFingerprintPercentage: Number(maxFraction) };\n"
        "const dolos = new Dolos(options);\n"
        "const report = await dolos.analyzePaths(paths);\n"
        "const out = report.allPairs().map(p => [p.leftFile.path, p.rightFile.path, p.similarity]);\n"
        "console.log(JSON.stringify(out));\n")
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, (language, source) in sorted(files.items()):
            if language != "python":
                continue
            path = Path(tmp) / f"{name}.py"
            path.write_text(source)
            paths.append(str(path))
        for fraction in ("none", "0.1"):
            done = subprocess.run(["node", str(script), fraction, *paths], capture_output=True, text=True, cwd=folder,
                                  timeout=600)
            if done.returncode:
                print(f"Dolos did not run: {done.stderr.strip()[-500:]}")
                return
            got = {tuple(sorted((Path(a).stem, Path(b).stem))): float(s) for a, b, s in json.loads(done.stdout)}
            names = sorted(Path(p).stem for p in paths)
            scores = {pair: got.get(pair, 0.0) for pair in combinations(names, 2)}
            ignored = "" if fraction == "none" else f", fragments in more than {fraction} of files ignored"
            label = "Dolos 3.5.1" + ignored
            report(label, scores, positives, threshold)


def main(argv: list[str]) -> int:
    threshold = similarity.DEFAULT_THRESHOLD
    python_files, python_pairs = similarity_class.python_class()
    r_files, r_pairs = similarity_class.r_class()
    files = {**python_files, **r_files}
    positives = {frozenset(p) for p in python_pairs + r_pairs}
    start = time.perf_counter()
    scores = scored(files)
    seconds = time.perf_counter() - start
    py = {p: s for p, s in scores.items() if files[p[0]][0] == "python"}
    r = {p: s for p, s in scores.items() if files[p[0]][0] == "r"}
    print(f"{len(python_files)} Python and {len(r_files)} R hand-ins scored in {seconds:.2f} s")
    results = {"python": report("Python class", py, {frozenset(p) for p in python_pairs}, threshold),
               "r": report("R class", r, {frozenset(p) for p in r_pairs}, threshold),
               "both": report("Both together", scores, positives, threshold)}
    if "--dolos" in argv:
        dolos(Path(argv[argv.index("--dolos") + 1]), python_files, {frozenset(p) for p in python_pairs}, threshold)
    # the bar, for each language's class
    good = all(results[k]["false_pairs"] == 0 and results[k]["flagged_copies"] >= results[k]["copies"] - 1
               and results[k]["ap"] >= 0.95 for k in ("python", "r"))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
