"""Students' names as files and rows (round 4): names that differ only in Unicode normalisation or case never share
a file, and names that look alike (Unicode's confusable skeletons, UTS #39) are flagged on every row."""

import unicodedata

from grader.intake.finding import find
from grader.intake.names import file_stem, shown, skeleton

NFC, NFD = "José Nfc", "Jose\u0301 Nfc"  # one typed composed, one decomposed: the same name on macOS or a share
ALICES = ["alice", "\u0430lice", "\u03b1lice", "\uff41\uff4c\uff49\uff43\uff45"]  # Latin, Cyrillic, Greek, full-width


def same_file(name: str) -> str:
    """What a file system that normalises names and ignores case (macOS, SMB) compares."""
    return unicodedata.normalize("NFC", name).casefold()


def test_names_that_differ_only_in_normalisation_or_case_get_files_of_their_own():
    taken: set[str] = set()
    stems = [file_stem(name, taken) for name in (NFC, NFD, "JOSÉ NFC", "Straße", "STRASSE")]
    assert len({same_file(s) for s in stems}) == len(stems)  # never one file where names are normalised or folded
    assert all(unicodedata.is_normalized("NFC", s) for s in stems)
    assert stems[:3] == [NFC, f"{NFC}-2", "JOSÉ NFC-3"]


def test_moodle_students_whose_names_differ_only_in_normalisation_are_two_rows_flagged_as_look_alikes(tmp_path):
    for pid, name in (("1874611", NFC), ("1874612", NFD)):
        folder = tmp_path / f"{name}_{pid}_assignsubmission_file_"
        folder.mkdir()
        (folder / "atencao.py").write_text("x = 1\n")
    first, second = find(tmp_path).entries
    assert same_file(first.student) != same_file(second.student)  # told apart where a person reads them
    assert {first.lms_id, second.lms_id} == {"1874611", "1874612"}
    assert first.lookalike == second.student and second.lookalike == first.student


def test_look_alikes_in_cyrillic_greek_and_full_width_letters_are_flagged_on_every_row(tmp_path):
    for name in [*ALICES, "bob"]:
        (tmp_path / f"{name}.py").write_text("x = 1\n")
    rows = {e.display: e for e in find(tmp_path).entries}
    for name in ALICES:
        others = [o for o in ALICES if o != name]
        assert all(o in rows[name].lookalike.split("; ") for o in others), (name, rows[name].lookalike)
    assert rows["bob"].lookalike == ""


def test_skeletons_come_from_unicodes_confusables_not_a_short_list():
    assert len({skeleton(n) for n in ALICES}) == 1
    assert skeleton("b\u0585b") == skeleton("bob")  # Armenian օ: in confusables.txt, in no hand-written list here
    assert skeleton("Ana Silva") != skeleton("Ana Sílvio")


def test_a_name_keeps_no_byte_a_terminal_or_page_would_act_on():
    assert shown(b"jos\xe9") == "jos\ufffd"
    assert shown("\x1b]0;pwned\x07\u202e<script>") == "\ufffd]0;pwned\ufffd\ufffd‹script›"
    assert len(shown("a" * 300)) == 80
