"""Stage fetch_data: download tiny Shakespeare (MHA_DATA_MIRROR first) and verify its sha256."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mha import fetch, params, schema
from mha.stage import EXIT_FAILED, REFUSALS, refuse, say


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"),
                        help="params file (reads its data: section)")
    parser.add_argument("--out", type=Path, required=True, help="where to put the verified corpus")
    parser.add_argument("--timeout", type=float, default=30.0, help="socket timeout in seconds, per attempt")
    parser.add_argument("--retries", type=int, default=3, help="attempts per source for transient errors")
    parser.add_argument("--backoff", type=float, default=1.0, help="seconds before the first retry, doubled each time")
    args = parser.parse_args(argv)
    try:
        data = params.section(schema.load(args.params, "data"), "data")
    except REFUSALS as exc:
        return refuse("fetch_data", exc)
    mirror = os.environ.get(fetch.MIRROR_ENV) or None
    try:
        result = fetch.fetch(
            data["url"], args.out, data["sha256"], mirror=mirror, timeout=args.timeout, retries=args.retries,
            backoff=args.backoff,
            log=lambda line: say("fetch_data", line, file=sys.stderr),
        )
    except fetch.FetchError as exc:
        say("fetch_data", exc, file=sys.stderr)
        return EXIT_FAILED
    say("fetch_data", f"{result.path} ({result.size:,} bytes, sha256 {result.sha256}) from {result.source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
