"""Stage fetch_data: download tiny Shakespeare (MHA_DATA_MIRROR first) and verify its sha256."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import yaml

from mha import fetch
from mha.stage_messages import tell


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
        data = yaml.safe_load(args.params.read_text())["data"]
        url, sha256 = data["url"], data["sha256"]
    except (OSError, KeyError, TypeError, yaml.YAMLError) as exc:
        tell("fetch_data", "fetch_data.params_unreadable", path=args.params, error=repr(exc))
        return 2
    mirror = os.environ.get(fetch.MIRROR_ENV) or None
    try:
        result = fetch.fetch(
            url, args.out, sha256, mirror=mirror, timeout=args.timeout, retries=args.retries, backoff=args.backoff,
            log=lambda line: tell("fetch_data", line),
        )
    except fetch.FetchError as exc:
        tell("fetch_data", exc)
        return 1
    tell("fetch_data", "fetch_data.fetched", file=sys.stdout, path=result.path, size=result.size, sha256=result.sha256,
         source=result.source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
