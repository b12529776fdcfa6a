"""Scores the last `mutmut run` (`make mutation`): per module, then one line `mutation score: NN.N%`.

A mutant counts as killed when a test failed or timed out on it. The score is killed over all mutants
less the equivalent ones: those listed in scripts/mutation_equivalent.toml, each with the line it
mutates and why no test can tell it from the original. An entry whose mutant no longer makes that
change (the code moved on) is said to be stale and not left out. Exits 1 when a module scores below
GOAL, so that the score line is the last one printed either way.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections import Counter
from pathlib import Path

from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code

REPO = Path(__file__).resolve().parents[1]
EQUIVALENT = Path(__file__).with_name("mutation_equivalent.toml")
GOAL = 85.0  # percent, per module
KILLED = ("killed", "timeout")


def _modules() -> list[str]:
    """The mutated files, as pyproject's [tool.mutmut] names them (its one declaration)."""
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"]


def _statuses(module: str) -> dict[str, str]:
    meta = REPO / "mutants" / f"{module}.meta"
    if not meta.exists():
        sys.exit(f"{meta} is missing: run `make mutation` (it runs mutmut first)")
    return {name: status_by_exit_code[code] for name, code in json.loads(meta.read_text())["exit_code_by_key"].items()}


def _mutated_line(name: str, module: str) -> str:
    """The mutant's changed line (the first + line of its diff), stripped."""
    diff = get_diff_for_mutant(name, path=module)
    return next((line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")),
                "")


def main() -> int:
    os.chdir(REPO)  # mutmut reads its mutants/ from the working folder
    equivalent = {e["mutant"]: e for e in tomllib.loads(EQUIVALENT.read_text()).get("equivalent", [])}
    killed = considered = 0
    below = []
    for module in _modules():
        statuses = _statuses(module)
        left_out = set()
        for name in sorted(set(equivalent) & set(statuses)):
            if _mutated_line(name, module) != equivalent[name]["mutated"]:
                print(f"  stale entry in {EQUIVALENT.name}: {name} no longer changes a line to "
                      f"`{equivalent[name]['mutated']}`")
            else:
                left_out.add(name)
        counted = {name: status for name, status in statuses.items() if name not in left_out}
        caught = sum(status in KILLED for status in counted.values())
        score = 100.0 * caught / max(len(counted), 1)
        killed, considered = killed + caught, considered + len(counted)
        tally = ", ".join(f"{n} {s}" for s, n in sorted(Counter(statuses.values()).items()))
        print(f"{module}: {score:.1f}% ({caught} of {len(counted)}; {len(left_out)} equivalent left out; {tally})")
        for name, status in sorted(counted.items()):
            if status not in KILLED:
                print(f"  {status}: {name}: {_mutated_line(name, module)}")
        if score < GOAL:
            below.append(module)
    if below:
        print(f"below the {GOAL:.0f}% goal: {', '.join(below)}")
    print(f"mutation score: {100.0 * killed / max(considered, 1):.1f}%")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
