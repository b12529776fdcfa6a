"""A class of 100 from the LMS's zip to the three exports: seconds, against grading the same class unpacked
with no export (the baseline, in the same run).

    .venv/bin/python benchmarks/lms_class.py [--count 100] [--jobs 2]

The class: 60 Moodle 4.1 students (folders, online text beside some) and 40 Canvas students (files at the top,
some late, some with a helper module), their code drawn in turn from the corpus's correct files and catalogued
mistakes; the zip written as the LMS writes it (UTF-8 names without the flag). The run grades with a secret and
writes the gradebook, Moodle's worksheet and feedback zip, and Canvas's gradebook import.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.grader.corpora.lms_downloads import USES_UTILS, UTILS, write_folder, write_zip  # noqa: E402

SUBMISSIONS = ROOT / "tests" / "grader" / "corpora" / "submissions"
KINDS = ["correct_numpy", "correct_torch", "correct_lists", "mistake_missing_scale", "mistake_mask_inverted",
         "mistake_softmax_overflow", "mistake_concat_wrong_axis"]
FIRST = ["Ana", "João", "Márcia", "Luís", "Conceição", "Gonçalo", "Íris", "Otávio", "Ângela", "Zé"]
LAST = ["Araújo", "Conceição", "Gonçalves", "Brandão", "Simões", "Lima", "Peçanha", "Müller"]


def class_members(count: int) -> dict[str, str]:
    members = {}
    for i in range(count):
        code = (SUBMISSIONS / f"{KINDS[i % len(KINDS)]}.py").read_text()
        first, last = FIRST[i % len(FIRST)], LAST[(i // len(FIRST)) % len(LAST)]
        if i < count * 6 // 10:
            folder = f"{first} {last} {i}_{1874501 + i}_assignsubmission_file"
            members[f"{folder}/atencao.py"] = code
            if i % 4 == 0:
                members[f"{first} {last} {i}_{1874501 + i}_assignsubmission_onlinetext/onlinetext.html"] = "<p>oi</p>"
        else:
            prefix = f"{last}{first}{i}".lower().replace(" ", "") + ("_LATE" if i % 5 == 0 else "") + f"_{9100000 + i}"
            if i % 3 == 0 and KINDS[i % len(KINDS)].startswith("correct"):
                members[f"{prefix}_{240000 + 2 * i}_atencao.py"] = USES_UTILS
                members[f"{prefix}_{240001 + 2 * i}_utils.py"] = UTILS
            else:
                members[f"{prefix}_{240000 + 2 * i}_atencao.py"] = code
    return members


def grader(*args) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    print(proc.stdout.strip().splitlines()[-1])
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        members = class_members(args.count)
        zipped = write_zip(tmp / "download.zip", members)
        folder = write_folder(tmp / "class", members)
        (tmp / "secret.txt").write_text("cd" * 32)
        common = ["--secret-file", tmp / "secret.txt", "--jobs", args.jobs, "--lang", "pt"]
        baseline = grader(folder, "--csv", tmp / "plain.csv", *common)
        full = grader(zipped, "--csv", tmp / "grades.csv", *common, "--out-of", 10,
                      "--moodle-worksheet", tmp / "worksheet.csv", "--moodle-feedback", tmp / "feedback.zip",
                      "--canvas-gradebook", tmp / "canvas.csv", "--canvas-assignment", "Atenção (123456)")
    print(f"{args.count} students, --jobs {args.jobs}: zip to the three exports {full:.1f} s; "
          f"the folder with no export {baseline:.1f} s (ratio {full / baseline:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
