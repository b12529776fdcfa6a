"""Imports run one way: no module of ``grader`` or ``mha`` imports, however indirectly, a module that imports it.

An import cycle is a concept in the wrong place (a value record inside the module that handles pipes, an
option of the rubric inside the judge). The graph is read from the source with ``ast``, never by importing:
every ``import`` and ``from ... import`` of a module, at its top level and inside its functions alike (an
import moved into a function to dodge a cycle still is one). ``from pkg import name`` is an edge to the
submodule ``pkg.name`` when there is one, else to ``pkg``; a package's ``__init__`` is a module like any other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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
