"""Stage verify_example: the course's worked example, three ways, against the published numbers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mha import verify
from mha.artifacts.worked import WORKED_EXAMPLE
from mha.files import write_json
from mha.stage import EXIT_FAILED, refuse, say


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--published", type=Path, default=None,
                        help="worked-example JSON (default: the packaged course data)")
    parser.add_argument("--metrics", type=Path, required=True,
                        help="where to write the summary metrics (passed, largest deviation and disagreement)")
    parser.add_argument("--matrices", type=Path, required=True,
                        help="where to write every computed matrix and verdict, with the tolerances, for the report")
    args = parser.parse_args(argv)
    try:
        result = verify.verify_worked_example(args.published)
    except (OSError, ValueError, KeyError) as exc:
        return refuse("verify_example", f"cannot read the worked example: {exc}")
    write_json(args.metrics, result.metrics())
    WORKED_EXAMPLE.write(args.matrices, result.record())
    for line in result.summary_lines():
        print(line)
    if not result.passed:
        for problem in result.problems():
            say("verify_example", f"MISMATCH {problem}", file=sys.stderr)
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
