"""Imports run one way: no module of ``grader`` or ``mha`` imports, however indirectly, a module that imports it.

An import cycle is a concept in the wrong place (a value record inside the module that handles pipes, an
option of the rubric inside the judge). The graph is read from the source with ``ast``, never by importing:
every ``import`` and ``from ... import`` of a module, at its top level and inside its functions alike (an
import moved into a function to dodge a cycle still is one). ``from pkg import name`` is an edge to the
submodule ``pkg.name`` when there is one, else to ``pkg``; a package's ``__init__`` is a module like any other.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from grader.functions import contract

# package -> its folder, relative to the repository
PACKAGES = {"grader": "grader", "mha": "src/mha"}


def module_names(package: str, folder: Path) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name, for its ``__init__.py``)."""
    names = {}
    for path in sorted(folder.rglob("*.py")):
        parts = [package, *path.relative_to(folder).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imported(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package, one level up per extra dot
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {name for name in found if name in known and name != module}


def import_graph(package: str, folder: Path) -> dict[str, set[str]]:
    names = module_names(package, folder)
    known = set(names)
    return {module: imported(module, path, known) for module, path in names.items()}


def tied_groups(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of modules that each reach one another through imports (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:  # recursive: a package's modules are a few hundred, far below the limit
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each tied group: the shortest way round from its first module."""
    return [_way_round(graph, group) for group in tied_groups(graph)]


def _way_round(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest cycle through the group's first module (breadth first, inside the group)."""
    start = min(group)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & group):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no way round {sorted(group)}")  # Tarjan's groups always have one


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycle(repo, package):
    graph = import_graph(package, repo / PACKAGES[package])
    assert len(graph) > 10, graph  # the package was found and read
    found = tied_groups(graph)
    assert not found, "import cycles:\n" + "\n".join(
        f"{' → '.join(_way_round(graph, group))}  (tied together: {', '.join(sorted(group))})" for group in found)


def test_the_graph_sees_function_level_and_relative_imports_and_names_the_cycle(tmp_path):
    """The reader itself: a cycle closed by an import inside a function, through ``from pkg import submodule``
    and a relative import, is found and named in order; the same modules without it are not."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub.leaf import VALUE\n")
    (pkg / "sub" / "leaf.py").write_text("VALUE = 1\n")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("from .sub import leaf\n\ndef late():\n    import pkg.a\n")
    graph = import_graph("pkg", pkg)
    assert graph["pkg.b"] == {"pkg.sub.leaf", "pkg.a"}
    assert graph["pkg.sub"] == {"pkg.sub.leaf"}  # a package re-exporting its own module is no cycle
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.a"]]
    (pkg / "b.py").write_text("from .sub import leaf\n")
    assert cycles(import_graph("pkg", pkg)) == []


# Question 1's judgement (numpy and the reference) is its package's own: the rest of the grader learns a function's
# name, a group, a mistake's id or the public seed from its contract, which imports only the standard library.
QUESTION_1 = "grader.functions"
CONTRACT = "grader.functions.contract"
# Modules that name question 1's functions and import numpy nowhere else: the intake (its helper process starts
# for every lone file), the rubric and the results.
NAMES_ONLY = ("grader.functions.contract", "grader.intake.handin", "grader.intake.bounded", "grader.rubric",
              "grader.results")


def taken_from_judgement(module: str, path: Path) -> set[tuple[str, str]]:
    """(module of question 1 but the contract, name) for each name ``module`` takes from one: ``from
    grader.functions.cases import FUNCTIONS`` and, after ``from grader.functions import cases``, ``cases.FUNCTIONS``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    taken, bound = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(QUESTION_1 + "."):
            if node.module != CONTRACT:
                taken.update((node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == QUESTION_1:
            bound.update({alias.asname or alias.name: f"{QUESTION_1}.{alias.name}" for alias in node.names})
        elif isinstance(node, ast.Import):
            bound.update({alias.asname: alias.name for alias in node.names
                          if alias.asname and alias.name.startswith(QUESTION_1 + ".")})
    bound = {name: source for name, source in bound.items() if source != CONTRACT}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            taken.add((bound[node.value.id], node.attr))
    return taken


def test_no_module_outside_question_1_imports_its_judgement_to_learn_a_name(repo):
    names = {name for name in vars(contract) if not name.startswith("_") and name != "annotations"}
    assert {"FUNCTIONS", "GROUPS", "TESTS", "MISTAKE_IDS", "DEFAULT_SEED"} <= names
    offending = sorted(f"{module} takes {name} from {source}: import it from {CONTRACT}"
                       for module, path in module_names("grader", repo / "grader").items()
                       if module != QUESTION_1 and not module.startswith(QUESTION_1 + ".")
                       for source, name in taken_from_judgement(module, path) if name in names)
    assert offending == [], "\n".join(offending)


def test_the_reader_finds_a_name_taken_from_the_cases_either_way(tmp_path):
    """The reader itself: both ways of taking FUNCTIONS from the cases are seen, the contract's are not."""
    path = tmp_path / "m.py"
    path.write_text("from grader.functions.cases import FUNCTIONS, all_cases\nfrom grader.functions import cases, "
                    "contract\nimport grader.functions.checks as judge\n\ndef f():\n    return cases.DEFAULT_SEED, "
                    "contract.GROUPS, judge.check\n")
    assert taken_from_judgement("m", path) == {
        ("grader.functions.cases", "FUNCTIONS"), ("grader.functions.cases", "all_cases"),
        ("grader.functions.cases", "DEFAULT_SEED"), ("grader.functions.checks", "check")}


@pytest.mark.parametrize("module", NAMES_ONLY)
def test_a_module_that_names_question_1s_functions_imports_no_numpy(module):
    probe = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    imported = set(result.stdout.split())
    assert module in imported and CONTRACT in imported  # the probe imported what it asked for
    assert {"numpy", "mha.reference", "grader.functions.cases"}.isdisjoint(imported), module
