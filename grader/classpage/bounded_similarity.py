"""The similarity step in a helper process of its own, with memory and time limits, as the intake is bounded.

The class page's similarity reads every hand-in's code: hostile data, of any size a hand-in may have. It runs in
``python -m grader.classpage.bounded_similarity``, a child that limits its own address space and CPU time before it
reads anything (``grader.intake.bounded``'s own ``_limit_myself``), and the grader waits for it at most
``SECONDS`` of wall time, then kills it and says why there is no answer. What it is given is capped where the
grader reads it (``render.read_sources``): the graded code only, each hand-in cut at ``FILE_CHARS`` and the class
at ``TOTAL_CHARS`` (hand-ins past it, in the order of their names, are left out and listed on the page), so the
grader's own process never holds more than that.

The boundary, both sides here, framed as the intake's (an 8-byte big-endian length and a JSON body): the request
is ``{"codes": {name: [language, source]}, "threshold"}``; the answer ``{"pairs": [[first, second, score,
[share, share], spans, spans]]}`` or ``{"failure": "memory" | "failed"}``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass

from grader.classpage.similarity import Code, Pair, close_pairs
from grader.intake.bounded import ONE_THREAD, _frame, _limit_myself, _package_root
from grader.intake.reading import MIB, Caps

SECONDS = 60  # the similarity step's wall time at most, whatever the class (docs/instructors.md)
MEMORY_BYTES = 768 * MIB  # its address space (Python and Pygments take about 40 MiB)
FILE_CHARS = 50_000  # of each hand-in's code compared (a hand-in of question 1 is 1 to 5 thousand)
TOTAL_CHARS = 6_000_000  # of the whole class compared: 120 hand-ins at the cap, thousands at their usual size
REQUEST_BYTES = 6 * TOTAL_CHARS + MIB  # JSON writes a control character in six bytes, any other in four at most
ANSWER_BYTES = 64 * MIB


@dataclass(frozen=True)
class Outcome:
    pairs: list[Pair] | None  # None: not computed, ``failure`` says why
    failure: str = ""  # "timeout", "memory" or "failed"


def _pair_to_wire(p: Pair) -> list:
    return [p.first, p.second, p.score, list(p.shares), p.first_spans, p.second_spans]


def _pair_from_wire(raw: list) -> Pair:
    first, second, score, shares, first_spans, second_spans = raw
    return Pair(str(first), str(second), float(score), (float(shares[0]), float(shares[1])),
                [(int(a), int(b)) for a, b in first_spans], [(int(a), int(b)) for a, b in second_spans])


def compare(codes: dict[str, Code], threshold: float, seconds: float = SECONDS) -> Outcome:
    """The close pairs of ``codes``, worked out in the bounded helper; never raises for what the code holds."""
    request = json.dumps({"codes": {name: [c.language, c.source] for name, c in codes.items()},
                          "threshold": threshold}, ensure_ascii=False).encode("utf-8", "surrogatepass")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **ONE_THREAD,
           "PYTHONPATH": os.pathsep.join(filter(None, [_package_root(), os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run([sys.executable, "-m", "grader.classpage.bounded_similarity", str(seconds)],
                              input=_frame(request), capture_output=True, timeout=seconds, env=env)
    except subprocess.TimeoutExpired:  # run() has killed it
        return Outcome(None, "timeout")
    if done.returncode == -getattr(signal, "SIGXCPU", 24):
        return Outcome(None, "timeout")
    size = int.from_bytes(done.stdout[:8], "big") if len(done.stdout) >= 8 else -1
    if done.returncode != 0 or size != len(done.stdout) - 8 or size > ANSWER_BYTES:
        return Outcome(None, "memory" if done.returncode in (-9, 137) or b"MemoryError" in done.stderr else "failed")
    try:
        answer = json.loads(done.stdout[8:])
        if "failure" in answer:
            return Outcome(None, "memory" if answer["failure"] == "memory" else "failed")
        return Outcome([_pair_from_wire(raw) for raw in answer["pairs"]])
    except (ValueError, TypeError, KeyError, IndexError):
        return Outcome(None, "failed")


def main(argv: list[str]) -> int:
    seconds = float(argv[0]) if argv else SECONDS
    size = int.from_bytes(sys.stdin.buffer.read(8), "big")
    if size > REQUEST_BYTES:  # never more than the caps let the grader send
        return 2
    _limit_myself(Caps(memory_bytes=MEMORY_BYTES), seconds)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    try:
        request = json.loads(sys.stdin.buffer.read(size).decode("utf-8", "surrogatepass"))
        codes = {name: Code(source, language) for name, (language, source) in request["codes"].items()}
        answer = {"pairs": [_pair_to_wire(p) for p in close_pairs(codes, float(request["threshold"]))]}
    except MemoryError:
        answer = {"failure": "memory"}
    except Exception:  # noqa: BLE001 - a bug here is the page's missing section, never the grader's crash
        answer = {"failure": "failed"}
    out.write(_frame(json.dumps(answer).encode()))
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
