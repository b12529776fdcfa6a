"""A student's totals (grader/intake/reading.py): past one is a refusal of its own type, which the intake's loops
let through where they pass over a file they cannot read."""

import os

import pytest

from grader.intake.reading import Caps, PastTotals, Refused, Tally, peek


@pytest.mark.parametrize(("spend", "key", "limit"), [
    (lambda t: [t.read(1) for _ in range(3)], "intake.total_files", 2),
    (lambda t: t.read(3 * 1024**2), "intake.total_bytes", 2.0),
    (lambda t: [t.zip_opened() for _ in range(3)], "intake.total_zips", 2),
    (lambda t: t.notebook(3), "intake.total_cells", 2),
])
def test_past_a_total_the_tally_refuses_the_whole_hand_in(spend, key, limit):
    tally = Tally(Caps(student_files=2, student_bytes=2 * 1024**2, student_zips=2, notebook_cells=2))
    with pytest.raises(PastTotals) as raised:
        spend(tally)
    assert isinstance(raised.value, Refused)  # what reads one file refuses it so too
    assert (raised.value.message.key, raised.value.message.values) == (key, {"limit": limit})


def test_at_a_total_nothing_is_refused():
    tally = Tally(Caps(student_files=2))
    tally.read(1)
    tally.read(1)
    assert tally.files == 2


def test_a_peek_reads_the_first_bytes_of_a_regular_file_whatever_its_size(tmp_path):
    path = tmp_path / "big.py"
    path.write_bytes(b"import torch\n" + b"#" * (3 * 1024**2))
    assert peek(path, 13) == b"import torch\n"


def test_a_peek_at_a_link_a_fifo_a_folder_or_nothing_is_empty_and_never_blocks(tmp_path):
    (tmp_path / "real.py").write_text("import torch\n")
    os.symlink(tmp_path / "real.py", tmp_path / "link.py")
    os.mkfifo(tmp_path / "fifo.py")
    for name in ("link.py", "fifo.py", ".", "missing.py"):
        assert peek(tmp_path / name, 100) == b""
