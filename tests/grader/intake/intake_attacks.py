"""Hostile hand-ins against the intake itself (parsing, not running): built at run time, each with the row it
must get. Every one is small on disk and under every cap, yet cost the grader its memory, its time or a
traceback before the intake was bounded.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .intake_corpus import CORRECT

MIB = 1024**2
DRAFT = "import numpy as np\n\n\ndef softmax(S):\n    return np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)\n"


@dataclass(frozen=True)
class Attack:
    entry: str  # its entry in the batch folder
    phrase: str  # in the reason (refused) or the feedback (graded), English
    phrase_pt: str
    total: float = 0.0
    status: str = "refused"

    def said(self, text: str, lang: str = "en") -> bool:
        """Whether ``text`` gives this attack's reason (one of its ``|``-separated phrases) in ``lang``."""
        return any(p in text for p in (self.phrase if lang == "en" else self.phrase_pt).split("|"))


ATTACKS = [
    Attack("punycode.py", "declares the encoding punycode", "declara a codificação punycode"),
    Attack("deep_expression.py", "nested deeper than Python can compile", "aninhada mais fundo"),
    Attack("deflate_broken.zip", "Error", "não é um arquivo zip"),
    Attack("lzma_broken.zip", "LZMAError", "não é um arquivo zip"),
    Attack("zip_bombs", "more than 16 zips", "mais de 16 zips"),
    Attack("zip_bombs_few", "more than 64 MiB in all", "mais de 64 MiB ao todo"),
    Attack("many_bangs.py", "more than the 200 the grader reads", "mais do que as 200"),
    # Refused past its memory, or past its time where the machine is too busy to reach the memory first.
    Attack("empty_objects.ipynb", "memory the grader gives it|took more than",
           "de memória que o corretor dá|levou mais de"),
    Attack("one_string", "Graded caderno.ipynb", "Corrigido caderno.ipynb", total=30.0, status="graded"),
]


def notebook(sources: list[str], joined: bool = True, outputs: list | None = None) -> str:
    """A notebook as Jupyter writes it; ``joined``: each cell's source as one string, else a list of lines."""
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": outputs or [],
              "source": source if joined else source.splitlines(keepends=True)} for i, source in enumerate(sources)]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _damaged_zip(path: Path, method: int) -> None:
    with zipfile.ZipFile(path, "w", method) as zf:
        zf.writestr("student.py", CORRECT * 20)
    data = bytearray(path.read_bytes())
    start = 30 + len("student.py") + 40  # past the local header: inside the compressed stream
    data[start:start + 64] = bytes(range(64))
    path.write_bytes(bytes(data))


def build(folder: Path) -> list[Attack]:
    """Write every attack into ``folder`` (made if missing); returns each with its expected row."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "punycode.py").write_text("# coding: punycode\n" + CORRECT, encoding="ascii", errors="replace")
    (folder / "deep_expression.py").write_text(CORRECT + "\nX = " + "+".join(["1"] * 100_000) + "\n")
    _damaged_zip(folder / "deflate_broken.zip", zipfile.ZIP_DEFLATED)
    _damaged_zip(folder / "lzma_broken.zip", zipfile.ZIP_LZMA)
    # 24 zips of 2 notebooks each just under the 32 MiB cap: 1.5 GiB unpacked from about 1.6 MiB.
    bombs = folder / "zip_bombs"
    bombs.mkdir()
    padding = " " * (32 * MIB - 4096)
    with zipfile.ZipFile(bombs / "bomb00.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in ("a.ipynb", "b.ipynb"):
            zf.writestr(name, notebook([CORRECT]) + padding)
    for i in range(1, 24):
        shutil.copy(bombs / "bomb00.zip", bombs / f"bomb{i:02}.zip")
    few = folder / "zip_bombs_few"  # as many zips as a student may hand in: the bytes in all refuse them
    few.mkdir()
    for i in range(3):
        shutil.copy(bombs / "bomb00.zip", few / f"bomb{i:02}.zip")
    # Correct code, then thousands of shell lines: IPython's transformer re-reads the file once per line.
    (folder / "many_bangs.py").write_text(CORRECT + "".join(f"!echo {i}\n" for i in range(5000)))
    # Ten million empty objects in an output: under the cap on disk, about 700 MiB once parsed.
    objects = "[" + ",".join(["{}"] * (10 * MIB)) + "]"
    outputs = [{"output_type": "display_data", "metadata": {}, "data": {"application/json": {"x": "PLACEHOLDER"}}}]
    text = notebook([CORRECT], outputs=outputs).replace('"PLACEHOLDER"', objects)
    (folder / "empty_objects.ipynb").write_text(text)
    # A notebook whose cells' sources are single strings (as nbformat allows) beside a one-function draft.
    one = folder / "one_string"
    one.mkdir()
    (one / "caderno.ipynb").write_text(notebook([CORRECT], joined=True))
    (one / "draft.py").write_text(DRAFT)
    return ATTACKS
