"""The class page within bounds on hand-ins as large as the intake lets through (the attack: six colluding hand-ins
of 2 MiB each once took 104.7 s, 815 MiB in the grader and a 59.9 MiB page).

The batch grades them with --class-page in the grader's own command line, reporting its own peak memory; the
similarity runs in its bounded helper on the capped code, and the page says what it left out.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from grader.classpage import bounded_similarity
from grader.intake.reading import MIB

from ..conftest import SUBMISSIONS
from ..intake.test_bounded import PEAK_MIB

PAGE_MIB = 4  # 20 side-by-side views of render.SHOWN_CHARS characters each, and the rest of the page


def _large(seed: int) -> str:
    """The correct numpy file, a thousand small functions (more than the similarity compares of a file) and
    comment lines, to just under the intake's 2 MiB per file."""
    parts = [(SUBMISSIONS / "correct_numpy.py").read_text()]
    parts += [f"\n\ndef pad_{i:04d}(x):\n    y = x * {i % 97} + {seed}\n    return y - {i % 13}\n" for i in range(1000)]
    size = sum(map(len, parts))
    line = "# " + "a hand-in as large as the intake lets through " * 2 + "\n"
    parts.append(line * ((2 * MIB - 200 - size) // len(line)))
    return "".join(parts)


@pytest.mark.timeout(900)
def test_six_colluding_hand_ins_of_2_mib_stay_within_every_bound(measured_grader, run_grader, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for n in range(6):
        (folder / f"student{n}.py").write_text(_large(seed=0))
    start = time.monotonic()
    proc, peak = measured_grader(folder, "--csv", tmp_path / "grades.csv", "--class-page", tmp_path / "class.html",
                                 "--lang", "en", "--seed", 1, timeout=800)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert peak < PEAK_MIB, f"the grader's own peak was {peak:.0f} MiB"
    page = (tmp_path / "class.html").read_text()
    assert len(page.encode()) < PAGE_MIB * MIB, len(page)
    # compared on their first characters only, and said so, naming each; the copies are still found
    assert "compared on their first" in page and all(f"student{n}" in page for n in range(6))
    assert page.count('data-score="1.0000"') == 15  # every pair of the six
    assert "more characters, not shown here" in page  # the side-by-side views are cut, and say so
    # the page alone again, from the gradebook: the similarity step within its stated bound
    start = time.monotonic()
    again = run_grader("class-page", tmp_path / "grades.csv", "--out", tmp_path / "again.html", "--lang", "pt",
                       timeout=300)
    seconds = time.monotonic() - start
    assert again.returncode == 0, again.stderr[-2000:]
    assert seconds < bounded_similarity.SECONDS + 30, seconds
    assert "só nos primeiros" in Path(tmp_path / "again.html").read_text()


def test_a_class_past_the_total_cap_is_compared_in_part_and_the_page_names_who_was_left_out(tmp_path, monkeypatch):
    from grader.classpage import render

    folder = tmp_path / "class"
    folder.mkdir()
    for n in range(3):
        (folder / f"s{n}.py").write_text((SUBMISSIONS / "correct_numpy.py").read_text())
    monkeypatch.setattr(bounded_similarity, "TOTAL_CHARS", 2 * len((SUBMISSIONS / "correct_numpy.py").read_text()) + 10)
    sources = render.read_sources(folder)
    assert sorted(sources.by_student) == ["s0", "s1"] and sources.left_out == ("s2",)
