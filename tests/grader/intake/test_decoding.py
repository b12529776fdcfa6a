"""Reading a hand-in's bytes as text: as Python reads a source file (its BOM, its coding line), else a fallback the
student is told about."""

from grader.intake.decoding import decode_source


def test_reading_follows_python_for_bom_and_coding_lines_and_falls_back_with_a_note():
    body = "s = 'função'\n"
    assert decode_source(body.encode("utf-8-sig"), "a.py") == (body, [])
    latin = ("# -*- coding: latin-1 -*-\n" + body).encode("latin-1")
    assert decode_source(latin, "a.py")[1] == []
    text, notes = decode_source(("x = 1\n" + body).encode("cp1252"), "a.py")
    assert text == "x = 1\n" + body and notes[0].values["line"] == 2 and notes[0].values["encoding"] == "cp1252"
