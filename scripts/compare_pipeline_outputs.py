"""Run the whole pipeline on two checkouts with tiny parameters and compare every output, byte for byte.

A refactor of src/mha must leave every pipeline output as it was. This script shows it:

    python scripts/compare_pipeline_outputs.py run CHECKOUT WORK   # CHECKOUT's files copied to WORK/repo, `dvc repro`
    python scripts/compare_pipeline_outputs.py compare WORK_A WORK_B

`run` copies the files git tracks in CHECKOUT (a fresh clone's, as tests/pipeline/test_e2e.py does), sets
tests/pipeline/test_e2e.py's tiny parameters (TINY, copied here so that two checkouts get the same ones),
commits the copy and runs `dvc repro` there with PYTHONPATH at the copy's src/ (so each copy runs its own mha,
with this interpreter's packages). Its outputs are every file the run changed or added: `git status` of the copy,
ignored files included, less DVC's own folder and dvc.lock (the hashes of each copy's own source files) and
bytecode.

`compare` sets the two runs' outputs side by side: the same paths, and for each file the same bytes, except
what records when, where and with which code a run happened, which differs between any two runs:
- JSON (the run records models/*.json, the run logs runs/**.json): every key named in VOLATILE_KEYS (the code's
  hashes and versions; the run log's times, speed and fingerprint) is dropped at any depth before comparing;
- checkpoints (.pt): loaded with torch, the run record in them compared as the JSON above, every tensor exactly;
- the HTML pages: compared as text without the run facts' rows of code hashes, with the copy's commit (a 40-hex
  cell) and its date (an ISO timestamp cell) masked.
It prints one line per file and exits 1 when any output differs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

TINY = {  # tests/pipeline/test_e2e.py's TINY
    "model": {"n_layer": 1, "n_head": 2, "n_embd": 16, "block_size": 64, "dropout": 0.0,
              "scale_scores": True, "positions": "learned"},
    "train": {"batch_size": 8, "max_iters": 30, "warmup_iters": 5, "lr": 0.01, "min_lr": 0.001,
              "eval_interval": 10, "eval_iters": 2, "checkpoint_interval": 10, "sample_chars": 40, "device": "cpu"},
    "lab": {"schedule": {"max_iters": 10, "warmup_iters": 2, "eval_interval": 5, "checkpoint_interval": 5},
            "scale": {"d_ks": [1, 2, 4], "samples": 16, "row_length": 8, "seed": 0},
            "order": {"windows": 4, "seed": 0}},
}
# Keys that record when, how fast and with which code a run happened (never a number it computed): the run
# record's `code` (each module's sha256, by file name) and `versions`, and the run log's (runs/) times, speed and
# the checkpoint's fingerprint, which covers the code's hashes.
VOLATILE_KEYS = {"code", "versions", "fingerprint", "started", "written", "wall_seconds", "tokens_per_second"}
# In the report's run facts: the copy's commit and its date, and one row per hashed module.
CODE_ROW = re.compile(r"<tr>\s*<th>code\.[^<]*</th>(\s*<td>[0-9a-f]{64}</td>)*\s*</tr>\s*")
COMMIT = re.compile(r"<td>[0-9a-f]{40}</td>")
TIMESTAMP = re.compile(r"<td>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d</td>")


def git(cwd: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=compare", "-c", "user.email=compare@example.com", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=True).stdout


def run(checkout: Path, work: Path) -> None:
    repo = work / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    for rel in git(checkout, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0"):
        if rel and (checkout / rel).is_file():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(checkout / rel, repo / rel)
    (repo / "dvc.lock").unlink(missing_ok=True)  # the committed lock is the full run's
    params = yaml.safe_load((repo / "params.yaml").read_text())
    for section, values in TINY.items():
        params[section].update(values)
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "copy")
    binary = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{binary}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(repo / "src"),
           "DVC_NO_ANALYTICS": "1"}
    imported = subprocess.run([sys.executable, "-c", "import mha; print(mha.__file__)"], env=env, cwd=repo,
                              capture_output=True, text=True, check=True).stdout.strip()
    assert imported.startswith(str(repo)), f"the copy would run another mha: {imported}"
    proc = subprocess.run([str(binary / "dvc"), "repro"], cwd=repo, env=env, capture_output=True, text=True)
    (work / "repro.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode:
        sys.exit(f"dvc repro failed in {repo}; see {work / 'repro.log'}")


def outputs(repo: Path) -> list[str]:
    """The files the run changed or added in its copy (git status, ignored files included)."""
    status = git(repo, "status", "--porcelain", "-z", "--ignored", "--untracked-files=all")
    paths = [entry[3:] for entry in status.split("\0") if entry]
    return sorted(p for p in paths if not p.startswith(".dvc/") and p != "dvc.lock" and "__pycache__" not in p
                  and not p.endswith(".pyc") and (repo / p).is_file())


def without_volatile(value):
    if isinstance(value, dict):
        return {k: without_volatile(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [without_volatile(v) for v in value]
    return value


def same_checkpoint(a: Path, b: Path) -> bool:
    import torch

    left, right = (torch.load(p, map_location="cpu", weights_only=False) for p in (a, b))
    return same_value(without_volatile_record(left), without_volatile_record(right))


def without_volatile_record(checkpoint: dict) -> dict:
    return {**checkpoint, "record": without_volatile(checkpoint.get("record"))}


def same_value(a, b) -> bool:
    import torch

    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and bool(torch.equal(a, b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same_value, a, b))
    return a == b


def verdict(a: Path, b: Path) -> str:
    """'identical', 'equal apart from ...' or 'DIFFERENT'."""
    left, right = a.read_bytes(), b.read_bytes()
    if left == right:
        return "identical"
    if a.suffix == ".json":
        try:
            same = without_volatile(json.loads(left)) == without_volatile(json.loads(right))
        except ValueError:
            same = False
        return "equal apart from times, versions and code hashes" if same else "DIFFERENT"
    if a.suffix == ".html":
        pages = [TIMESTAMP.sub("<td>T</td>", COMMIT.sub("<td>C</td>", CODE_ROW.sub("", data.decode())))
                 for data in (left, right)]
        return "equal apart from the commit, its date and the code's hashes" if pages[0] == pages[1] else "DIFFERENT"
    if a.suffix == ".pt":
        return "equal apart from the record's code hashes" if same_checkpoint(a, b) else "DIFFERENT"
    return "DIFFERENT"


def compare(work_a: Path, work_b: Path) -> int:
    repo_a, repo_b = work_a / "repo", work_b / "repo"
    outs_a, outs_b = outputs(repo_a), outputs(repo_b)
    differ = 0
    for path in sorted(set(outs_a) ^ set(outs_b)):
        print(f"ONLY IN {'A' if path in outs_a else 'B'}: {path}")
        differ += 1
    counts: dict[str, int] = {}
    for path in sorted(set(outs_a) & set(outs_b)):
        said = verdict(repo_a / path, repo_b / path)
        counts[said] = counts.get(said, 0) + 1
        if said != "identical":
            print(f"{said}: {path}")
        differ += said == "DIFFERENT"
    verdicts = ", ".join(f"{n} {said}" for said, n in sorted(counts.items()))
    print(f"{len(set(outs_a) | set(outs_b))} outputs: {verdicts}")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "run":
        run(Path(argv[1]).resolve(), Path(argv[2]).resolve())
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
