"""The import graph of scripts/' Python, and its loops: ``python3 -m
weirtools.imports`` (with scripts/lib on PYTHONPATH; scripts/test runs it).

Every Python file under scripts/ (``*.py``, and the harnesses without a
suffix whose first line names python3) is read with :mod:`ast`, never run;
each import, at the top or inside a function, becomes an edge when it names
a module of the repository: a package of scripts/lib (weirtools, a harness's
own, ``from .cases import`` within it), or a sibling in the file's own folder
(bench.d's modules, a harness's ``NAME.d/`` for ``scripts/NAME``). Fails (exit 1)
on a loop (a strongly connected set of two or more modules, or a module
importing itself), and on a module of weirtools importing anything but the
standard library and weirtools (what the harnesses share must not need them).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from weirtools import ROOT

SCRIPTS = ROOT / "scripts"
LIB = SCRIPTS / "lib"
PACKAGE = LIB / "weirtools"


def python_files() -> list[Path]:
    """scripts/' Python files: ``*.py``, and files whose first line names python3."""
    found = []
    for path in sorted(SCRIPTS.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        if path.suffix == ".py":
            found.append(path)
        elif not path.suffix:
            with path.open("rb") as f:
                if b"python3" in f.readline():
                    found.append(path)
    return found


def package_of(path: Path) -> str | None:
    """The dotted name of the package ``path`` is in, when it is one under scripts/lib."""
    if LIB not in path.parents:
        return None
    return ".".join(path.parent.relative_to(LIB).parts) or None


def imported_names(path: Path) -> list[str]:
    """Every module name ``path`` imports (``a.b`` for ``from a.b import c``, and ``a.b.c`` when c is a
    module), relative imports made absolute."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module
            if node.level:
                package = package_of(path)
                if package is None:
                    continue
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            if module:
                names.append(module)
                names += [f"{module}.{alias.name}" for alias in node.names]
    return names


def resolve(name: str, path: Path) -> Path | None:
    """The repository's module ``name`` means when ``path`` imports it, or None (the standard library, a package)."""
    parts = name.split(".")
    if (LIB / parts[0] / "__init__.py").is_file() or (LIB / parts[0]).is_dir():
        target = LIB.joinpath(*parts)
        if target.with_suffix(".py").is_file():
            return target.with_suffix(".py")
        if (target / "__init__.py").is_file():
            return target / "__init__.py"
        return None
    if len(parts) > 1:
        return None
    folders = [path.parent]
    if not path.suffix:
        folders.append(path.parent / f"{path.name}.d")
    for folder in folders:
        if (folder / f"{name}.py").is_file():
            return folder / f"{name}.py"
    return None


def loops(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """The strongly connected sets of more than one module, and the modules that import themselves (Tarjan)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found: list[list[Path]] = []

    def visit(node: Path) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main() -> int:
    graph: dict[Path, set[Path]] = {}
    problems = []
    stdlib = sys.stdlib_module_names
    for path in python_files():
        names = imported_names(path)
        graph[path] = {target for name in names if (target := resolve(name, path)) is not None and target != path}
        if PACKAGE in path.parents:
            for name in names:
                top = name.split(".")[0]
                if top not in stdlib and top not in ("weirtools", "__future__"):
                    where = path.relative_to(ROOT)
                    problems.append(f"{where} imports {name}: weirtools needs the standard library alone")
    for component in loops(graph):
        problems.append("an import loop: " + " → ".join(str(p.relative_to(ROOT)) for p in component))
    edges = sum(len(targets) for targets in graph.values())
    for problem in problems:
        print(f"scripts/lib/weirtools/imports.py: {problem}", file=sys.stderr)
    print(f"imports: {len(graph)} Python files under scripts/, {edges} imports between them, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
