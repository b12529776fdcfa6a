"""The intake's corpus: every shape a hand-in of this course comes in, built into a batch folder at run time.

Files git can hold are in ``handins/``; what it cannot (links, a FIFO, names with any byte, encodings and
line ends that ``.gitattributes`` would normalise) is made here. Each shape comes with the row it must get.
"""

from __future__ import annotations

import codecs
import os
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..conftest import CORPORA, SUBMISSIONS

HANDINS = CORPORA / "handins"
CORRECT = (SUBMISSIONS / "correct_numpy.py").read_text()
REFERENCE = Path(__file__).resolve().parents[3] / "src" / "mha" / "reference.py"
PORTUGUESE = "# função de atenção: máscara causal, cabeças, atenção\n"
UTILS = ("import numpy as np\n\n\ndef softmax(S):\n    e = np.exp(S - S.max(axis=1, keepdims=True))\n"
         "    return e / e.sum(axis=1, keepdims=True)\n")
USES_UTILS = CORRECT.replace("def softmax(S):", "from utils import softmax\n\n\ndef _unused_softmax(S):")
LONG_NAME = "a" * 236  # 240 bytes with ".py"
HOSTILE_NAME = "\x1b[31mevil\u202e<img src=x onerror=alert(1)>"


@dataclass(frozen=True)
class Shape:
    """One hand-in of the corpus and the row it must get."""

    entry: str | bytes  # the name of its entry in the batch folder
    student: str  # its name in the gradebook
    status: str  # graded | import failed | refused
    total: float
    phrase: str = ""  # in the reason (not graded) or the results' output (graded), English
    phrase_pt: str = ""
    late: bool = False

    @property
    def correct(self) -> bool:
        return self.status == "graded" and self.total == 30


def _zip(path: Path, members: dict[str, str], links: dict[str, str] = ()) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, body in members.items():
            zf.writestr(name, body)
        for name, target in dict(links).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)


def build(folder: Path) -> list[Shape]:
    """Write every shape into ``folder`` (made if missing); returns each with its expected row."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("caderno.ipynb", "colab_download.py", "nbconvert_export.py", "train_at_top_level.py",
                 "loose_ends.py", "cuda_inside.py", "tab_error.py"):
        shutil.copy(HANDINS / name, folder / name)
    (folder / "cp1252.py").write_bytes((PORTUGUESE + CORRECT).encode("cp1252"))
    (folder / "utf16.PY").write_bytes(codecs.BOM_UTF16_LE + (PORTUGUESE + CORRECT).encode("utf-16-le"))
    (folder / "bom_crlf.py").write_bytes(codecs.BOM_UTF8 + (PORTUGUESE + CORRECT).replace("\n", "\r\n").encode())
    moodle = folder / "Fernanda Lima_123456_assignsubmission_file_"
    moodle.mkdir()
    (moodle / "atencao.py").write_text(CORRECT)
    (folder / "Fernanda Lima_123456_assignsubmission_onlinetext_onlinetext.html").write_text("<p>oi</p>")
    (folder / "limafernanda_LATE_12345_67890_atencao.py").write_text(CORRECT)
    (folder / "souzagabi_23456_78901_solucao.py").write_text(USES_UTILS)
    (folder / "souzagabi_23456_78902_utils.py").write_text(UTILS)
    _zip(folder / "paulo.zip", {"entrega/student.py": CORRECT, "__MACOSX/entrega/._student.py": "junk",
                                "../escape.py": "print('out')"}, links={"entrega/gabarito.py": str(REFERENCE)})
    _zip(folder / "muitos.zip", {f"f{i}.py": "" for i in range(600)})
    (folder / "helena" / "entrega").mkdir(parents=True)
    (folder / "helena" / "entrega" / "student.py").write_text(CORRECT)
    (folder / "gabi").mkdir()
    (folder / "gabi" / "solucao.py").write_text(USES_UTILS)
    (folder / "gabi" / "utils.py").write_text(UTILS)
    (folder / "vazio").mkdir()
    (folder / "quebrado.ipynb").write_text("{not json")
    os.symlink(REFERENCE, folder / "ref_link.py")
    os.symlink("cp1252.py", folder / "copycat.py")
    os.mkfifo(folder / "fifo.py")
    os.symlink("/dev/zero", folder / "zeros.py")
    (folder / "huge.py").write_text(CORRECT + "#" * (3 * 1024**2) + "\n")
    (folder / os.fsdecode(b"jos\xe9.py")).write_text(CORRECT)
    (folder / f"{LONG_NAME}.py").write_text(CORRECT)
    (folder / f"{HOSTILE_NAME}.py").write_text(CORRECT)
    (folder / "x.py").write_text(CORRECT)
    for name in ("x", "x-2"):
        (folder / name).mkdir()
        (folder / name / "student.py").write_text(CORRECT)
    (folder / "notes.txt").write_text("not a submission")
    return SHAPES


def _graded(entry, student, phrase="", phrase_pt="", total=30.0, late=False) -> Shape:
    return Shape(entry, student, "graded", total, phrase, phrase_pt, late)


def _refused(entry, student, phrase, phrase_pt, status="refused") -> Shape:
    return Shape(entry, student, status, 0.0, phrase, phrase_pt)


SHAPES = [
    _graded("caderno.ipynb", "caderno", "meant for Jupyter or Colab", "feitas para o Jupyter ou o Colab"),
    _graded("colab_download.py", "colab_download", "google.colab exists only in Colab", "só existe no Colab"),
    _graded("nbconvert_export.py", "nbconvert_export", "meant for Jupyter or Colab"),
    _graded("train_at_top_level.py", "train_at_top_level", 'if __name__ == "__main__"', "foi interrompida"),
    _graded("loose_ends.py", "loose_ends", "torch.cuda.is_available()", "não está disponível"),
    _graded("cuda_inside.py", "cuda_inside", "torch.cuda.is_available()", "A correção roda sem GPU", total=0.0),
    _refused("tab_error.py", "tab_error", "mixes tabs and spaces", "mistura tabs e espaços", status="import failed"),
    _graded("cp1252.py", "cp1252", "not saved as UTF-8", "não está salvo em UTF-8"),
    _graded("utf16.PY", "utf16"),
    _graded("bom_crlf.py", "bom_crlf"),
    _graded("Fernanda Lima_123456_assignsubmission_file_", "Fernanda Lima"),
    _graded("limafernanda_LATE_12345_67890_atencao.py", "limafernanda", late=True),
    _graded("souzagabi_23456_78901_solucao.py", "souzagabi", "utils.py", "auxiliar"),
    _graded("paulo.zip", "paulo", "Left out of paulo.zip", "Deixado de fora"),
    _refused("muitos.zip", "muitos", "600 entries, more than the 500", "600 entradas"),
    _graded("helena", "helena"),
    _graded("gabi", "gabi", "utils.py", "auxiliar"),
    _refused("vazio", "vazio", "holds no .py, .ipynb, .R, .Rmd or .qmd file", "não tem nenhum arquivo"),
    _refused("quebrado.ipynb", "quebrado", "not a notebook Jupyter can open", "não é um notebook"),
    _refused("ref_link.py", "ref_link", "symbolic link", "link simbólico"),
    _refused("copycat.py", "copycat", "symbolic link", "link simbólico"),
    _refused("fifo.py", "fifo", "named pipe (FIFO)", "pipe nomeado"),
    _refused("zeros.py", "zeros", "symbolic link", "link simbólico"),
    _refused("huge.py", "huge", "more than the 2 MiB the grader reads", "mais do que os 2 MiB"),
    _graded(b"jos\xe9.py", "jos\ufffd"),
    _graded(f"{LONG_NAME}.py", "a" * 79 + "…"),
    _graded(f"{HOSTILE_NAME}.py", "\ufffd[31mevil\ufffd‹img src=x onerror=alert(1)›"),
    _graded("x.py", "x (x.py)"),
    _graded("x", "x (x/)"),
    _graded("x-2", "x-2"),
]
NOT_SUBMISSIONS = ["notes.txt", "Fernanda Lima_123456_assignsubmission_onlinetext_onlinetext.html"]
