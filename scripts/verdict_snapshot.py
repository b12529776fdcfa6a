"""Every verdict the grader gives on the test corpora, as one canonical JSON file, to compare two versions of the
grader (a refactor must leave every verdict as it was):

    python scripts/verdict_snapshot.py before.json       # on the old commit
    python scripts/verdict_snapshot.py after.json        # on the new one
    python scripts/verdict_snapshot.py --compare before.json after.json

Each corpus folder is graded as the instructor grades a class (`python -m grader FOLDER --csv ...`, one public seed,
English), each hand-in a student; the snapshot keeps each student's whole results JSON (score, every test's points,
status, mistakes and wording) and the gradebook's row, without the times the grading took.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA_DIR = REPO / "tests" / "grader" / "corpora"
CORPORA = ("submissions", "variants", "outside", "handins", "modules", "module_attacks", "judge", "r_corpus")
SUFFIXES = {".py", ".ipynb", ".R", ".Rmd", ".qmd", ".zip"}
SEED = 20240917  # the public seed: a snapshot is a reproduction, not a grading
VOLATILE = {"execution_time", "date", "seconds", "results_dir", "submissions"}


def without_times(value):
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def grade_corpus(corpus: Path, work: Path) -> dict:
    folder = work / corpus.name
    folder.mkdir()
    for path in sorted(corpus.iterdir()):
        if path.is_file() and path.suffix in SUFFIXES and not path.name.startswith("_"):
            shutil.copy2(path, folder / path.name)
    gradebook = work / f"{corpus.name}.csv"
    subprocess.run([sys.executable, "-m", "grader", str(folder), "--csv", str(gradebook), "--seed", str(SEED),
                    "--lang", "en"], check=True, stdout=subprocess.DEVNULL)
    with gradebook.open(newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    results = work / f"{corpus.name}_results"
    return {student: {"row": row, "results": without_times(json.loads((results / f"{student}.json").read_text()))}
            for student, row in sorted(rows.items())}


def compare(before: dict, after: dict) -> list[str]:
    differences = []
    for corpus in sorted(set(before) | set(after)):
        old, new = before.get(corpus, {}), after.get(corpus, {})
        for student in sorted(set(old) | set(new)):
            if old.get(student) != new.get(student):
                differences.append(f"{corpus}/{student}")
    return differences


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, help="the snapshot to write")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), help="folders of tests/grader/corpora")
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        differences = compare(before, after)
        count = sum(len(students) for students in before.values())
        for name in differences:
            print(f"differs: {name}")
        print(f"{count} hand-ins in {len(before)} corpora; {len(differences)} differ")
        return 1 if differences else 0
    if args.out is None:
        parser.error("give the snapshot file to write, or --compare BEFORE AFTER")
    snapshot = {}
    with tempfile.TemporaryDirectory() as work:
        for number, name in enumerate(args.corpora, 1):
            print(f"[{number}/{len(args.corpora)}] grading tests/grader/corpora/{name}", flush=True)
            snapshot[name] = grade_corpus(CORPORA_DIR / name, Path(work))
    partial = args.out.with_name(args.out.name + ".part")
    partial.write_text(json.dumps(snapshot, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
