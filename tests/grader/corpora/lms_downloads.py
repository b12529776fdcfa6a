"""Class downloads built exactly as the LMSs name them, for the layout and export tests.

Moodle (mod/assign, "Download all submissions"): the folder ``<full name>_<participant id>_<plugin>`` with a
trailing "_" before 4.1 and none since, or every file at the top as ``<folder>_<file name>``; online text comes
as ``..._assignsubmission_onlinetext/onlinetext.html``. Canvas ("Download Submissions"): every file at the top
as ``<sortable name, letters only, lowercase>[_LATE]_<user id>_<attachment id>_<file name>``.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from ..conftest import SUBMISSIONS

CORRECT = (SUBMISSIONS / "correct_numpy.py").read_text()
MISSING_SCALE = (SUBMISSIONS / "mistake_missing_scale.py").read_text()
UTILS = ("import numpy as np\n\n\ndef softmax(S):\n    e = np.exp(S - S.max(axis=1, keepdims=True))\n"
         "    return e / e.sum(axis=1, keepdims=True)\n")
USES_UTILS = CORRECT.replace("def softmax(S):", "from utils import softmax\n\n\ndef _unused_softmax(S):")
ONLINE_TEXT = "<p>Professora, segue minha entrega.</p>"

# (participant id, full name, files) of a Moodle class; None: the student typed only online text.
MOODLE_CLASS = [
    ("1874501", "Ana Beatriz Conceição", {"atencao.py": CORRECT}),
    ("1874502", "João Pedro Araújo", {"solucao.py": USES_UTILS, "utils.py": UTILS}),
    ("1874503", "Márcia Gonçalves", {"atencao.py": MISSING_SCALE}),
    ("1874504", "Luís Otávio", None),
]
# (user id, sortable name as Canvas writes it, late, files) of a Canvas class.
CANVAS_CLASS = [
    ("9100111", "conceiçãoanabeatriz", True, {"atencao.py": USES_UTILS, "utils.py": UTILS}),
    ("9100112", "araújojoãopedro", False, {"atencao.py": MISSING_SCALE}),
    ("9100113", "ßtraßegünther", False, {"atencao.py": CORRECT}),
]
EXPECTED_TOTAL = {"1874501": 30, "1874502": 30, "1874503": None, "1874504": 0,
                  "9100111": 30, "9100112": None, "9100113": 30}  # None: loses points to the missing scale


def moodle_members(version: str, in_folders: bool = True) -> dict[str, str]:
    """A Moodle download's members: version "3" (folders end in "_") or "4.1" (they do not)."""
    end = "_" if version == "3" else ""
    members = {}
    for pid, name, files in MOODLE_CLASS:
        text_folder = f"{name}_{pid}_assignsubmission_onlinetext{end}"
        members[f"{text_folder}/onlinetext.html" if in_folders else f"{text_folder}_onlinetext.html"] = ONLINE_TEXT
        for file, body in (files or {}).items():
            folder = f"{name}_{pid}_assignsubmission_file{end}"
            members[f"{folder}/{file}" if in_folders else f"{name}_{pid}_assignsubmission_file_{file}"] = body
    return members


def canvas_members() -> dict[str, str]:
    members, attachment = {}, 240101
    for uid, name, late, files in CANVAS_CLASS:
        for file, body in files.items():
            members[f"{name}{'_LATE' if late else ''}_{uid}_{attachment}_{file}"] = body
            attachment += 1
    return members


def write_folder(folder: Path, members: dict[str, str]) -> Path:
    for name, body in members.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    return folder


def write_zip(path: Path, members: dict[str, str], utf8_flag: bool = False) -> Path:
    """As the LMS zips it: UTF-8 names, without the flag that says so unless ``utf8_flag`` (zipfile always sets
    it for a non-ASCII name, so it is cleared afterwards in every local and central header)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in members.items():
            zf.writestr(zipfile.ZipInfo(name, (2024, 5, 1, 12, 0, 0)), body)
    if not utf8_flag:
        data = bytearray(path.read_bytes())
        for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            at = data.find(signature)
            while at >= 0:
                flags = int.from_bytes(data[at + offset:at + offset + 2], "little") & ~0x800
                data[at + offset:at + offset + 2] = flags.to_bytes(2, "little")
                at = data.find(signature, at + 4)
        path.write_bytes(bytes(data))
    return path
