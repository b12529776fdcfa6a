"""The docs by audience: a short README that leads to one page per audience, links that lead somewhere, and
source files that say what the code does rather than the history of how it came to be."""

import ast
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = sorted((REPO / "docs").glob("*.md")) + [README, REPO / "benchmarks" / "README.md"]
# What `make pages` writes after a full reproduction (scripts/pages.py): linked before it exists in a checkout.
MADE_BY_MAKE_PAGES = ("docs/pages/", "docs/screenshots/")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # a `#` comment in a code block is no heading
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def test_the_readme_is_short_and_leads_to_one_page_per_audience():
    text = README.read_text()
    assert len(text.encode()) <= 6 * 1024, len(text.encode())
    for audience, page in (("Students", "docs/students.md"), ("Instructors", "docs/instructors.md"),
                           ("Contributors", "docs/architecture.md")):
        line = next(line for line in text.splitlines() if line.startswith(f"- **{audience}**"))
        assert LINK.findall(line) == [page], line  # one page per audience, no choice to make
    assert "make test" in text and "make repro" in text


def test_the_students_page_is_in_portuguese_first():
    headings = [line for line in (REPO / "docs" / "students.md").read_text().splitlines() if line.startswith("## ")]
    assert headings == ["## Português", "## English"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_of_the_docs_leads_to_a_file_and_a_heading_that_exist(page):
    broken = []
    for target in LINK.findall(page.read_text()):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        rel = file.relative_to(REPO).as_posix() + ("/" if path.endswith("/") else "")
        if rel.startswith("docs/screenshots/class-"):  # the class page's, written by its browser test
            browser_test = REPO / "tests/grader/classpage/test_render.py"
            assert file.exists() and "CLASS_PAGE_SCREENSHOTS" in browser_test.read_text()
            continue
        if rel.startswith(MADE_BY_MAKE_PAGES):
            pages_script = (REPO / "scripts" / "pages.py").read_text()
            assert rel.rstrip("/").removeprefix("docs/").split("/")[0] in pages_script, rel
            assert rel.endswith("/") or f'"{Path(rel).name}"' in pages_script, rel  # a page it copies
            continue
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(file):
            broken.append(f"{target}: no such heading in {rel}")
    assert broken == []


# An issue's number, the n-th pass at a change, what came before an issue: what changed when, which git log keeps.
HISTORY = re.compile(r"\b[Ii]ssue \d+|\b(second|third|fourth|fifth) pass\b|\bbefore [i]ssue\b")


def test_no_source_file_tells_the_history_of_issues_and_passes():
    told = []
    for folder in ("src", "grader", "pipeline", "benchmarks", "scripts", "tests"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix not in (".py", ".toml", ".j2", ".sh", ".md"):
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if HISTORY.search(line):
                    told.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert told == [], "history belongs in git, not in the source:\n" + "\n".join(told)


def test_the_metrics_example_shows_the_committed_metrics():
    """docs/pipeline.md's `dvc metrics show` example: every number it shows is the committed metrics file's, as DVC
    rounds it (5 decimals); `…` stands for a run not yet reproduced. test_e2e checks its columns and files against
    a real `dvc metrics show`."""
    text = (REPO / "docs" / "pipeline.md").read_text()
    header, *rows = text[text.index("$ dvc metrics show\n"):].split("```", 1)[0].splitlines()[1:]
    columns = header.split()[1:]
    stale = []
    for row in rows:
        path, *cells = row.split()
        for column, cell in zip(columns, cells, strict=True):
            if cell in ("-", "…"):
                continue
            value = json.loads((REPO / path).read_text())[column]
            shown = str(value) if isinstance(value, bool) else str(round(value, 5))
            if cell != shown:
                stale.append(f"{path} {column}: the example shows {cell}, the file holds {shown}")
    assert stale == []


ARCHITECTURE = REPO / "docs" / "architecture.md"
# A module path in the prose: grader/..., src/mha/..., pipeline/... (mha/... is src/mha/...), not inside tests/...
MODULE_PATH = re.compile(r"(?<![\w/.-])(src/mha|mha|grader|pipeline)/([\w./*-]*)")
# A dotted name of a module, or of a name one defines: grader.module.layouts.place, mha.schema.GPTConfig
DOTTED = re.compile(r"(?<![\w.])(grader|mha)((?:\.[A-Za-z_]\w*)+)")
ROOTS = {"grader": REPO / "grader", "mha": REPO / "src" / "mha", "src/mha": REPO / "src" / "mha",
         "pipeline": REPO / "pipeline"}
PLACEHOLDER = re.compile(r"\b[A-Z]{2,}\b")  # pipeline/NAME.py: a name the reader chooses


def architecture_text() -> str:
    """The page without the renames table's "before" column, which names what no longer exists by design."""
    lines = []
    for line in ARCHITECTURE.read_text().splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) == 3 and "`" in cells[0]:
            line = " | ".join(cells[1:])
        lines.append(line)
    return "\n".join(lines)


def top_level_names(module: Path) -> set[str]:
    """What a module defines or imports at its top level (inside ``if`` and ``try`` blocks too)."""
    names, body = set(), list(ast.parse(module.read_text()).body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try)):
            body += node.body + node.orelse + getattr(node, "finalbody", []) + [
                n for h in getattr(node, "handlers", []) for n in h.body]
    return names


def dotted_exists(root: str, rest: str) -> bool:
    """``root.rest`` is a module, or a name the longest module among its prefixes defines at its top level."""
    parts, folder = rest.strip(".").split("."), ROOTS[root]
    for i, part in enumerate(parts):
        if (folder / part / "__init__.py").exists():
            folder = folder / part
            continue
        if (folder / f"{part}.py").exists():
            return i + 1 == len(parts) or parts[i + 1] in top_level_names(folder / f"{part}.py")
        return part in top_level_names(folder / "__init__.py")
    return True


def path_exists(root: str, rest: str) -> bool:
    rest = rest.rstrip(".")
    if "*" in rest:
        return any(ROOTS[root].glob(rest))
    return (ROOTS[root] / rest).exists()


def module_map() -> list[tuple[str, Path]]:
    """The module map's entries as (the line's name, the path it names): a folder at the margin, an entry two spaces
    in under it, four spaces in under the last entry's folder; ``a.py, b.toml`` two files, ``x.py, .R`` x.R too."""
    text = ARCHITECTURE.read_text()
    block = text[text.index("## Module map"):].split("```")[1]
    entries, parents = [], {}
    for line in block.splitlines():
        match = re.match(r"( *)(\S+(?:, \S+)*)(?:  |$)", line)
        indent = len(match.group(1)) if match else -1
        if indent not in (0, 2, 4):
            continue  # a description's second line
        names = match.group(2).split(", ")
        base = REPO if indent == 0 else parents[indent - 2]
        stem = names[0].rsplit(".", 1)[0]
        for name in names:
            entries.append((name, base / (stem + name if name.startswith(".") else name)))
        if names[0].endswith("/"):
            parents[indent] = base / names[0]
    return entries


def test_every_module_the_architecture_page_names_exists():
    text = architecture_text()
    missing = [f"{root}/{rest}" for root, rest in sorted(set(MODULE_PATH.findall(text)))
               if not PLACEHOLDER.search(rest) and not path_exists(root, rest)]
    missing += [root + rest for root, rest in sorted(set(DOTTED.findall(text))) if not dotted_exists(root, rest)]
    missing += [f"module map: {name} ({path.relative_to(REPO)})" for name, path in module_map() if not path.exists()]
    assert missing == [], "docs/architecture.md names what does not exist:\n" + "\n".join(missing)


def test_the_module_map_names_every_grader_subpackage_once():
    named = [path.relative_to(REPO).as_posix().rstrip("/") for _, path in module_map()]
    packages = sorted(p.parent.relative_to(REPO).as_posix() for p in (REPO / "grader").rglob("__init__.py")
                      if p.parent != REPO / "grader")
    unnamed = [package for package in packages if package not in named]
    twice = sorted({name for name in named if named.count(name) > 1})
    assert unnamed == [] and twice == [], f"not in docs/architecture.md's module map: {unnamed}; named twice: {twice}"
