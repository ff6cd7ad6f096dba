"""The house's measures, rerunnable by anyone: `python -m tests.measures` prints the modules of
mca/ over 400 lines, the functions over 60 lines, the import cycles (every import counts,
type-only and deferred ones included), the imports that cross a layer upward (the layers are
docs/ARCHITECTURE.md's table), the modules loose at mca/'s top level, the file names used twice
and the imports a boundary forbids (no tool imports a skills module).
tests/test_architecture.py holds the limits."""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mca"
DOC = ROOT / "docs" / "ARCHITECTURE.md"
MODULE_LIMIT = 400
FUNCTION_LIMIT = 60
TOP_LEVEL_LIMIT = 15  # modules loose at mca/'s top level (packages say the rest)
# (importer, imported): no module under the first imports one under the second
FORBIDDEN = (("mca.tools", "mca.skills"),)


class Long(NamedTuple):
    """A module or a function and its length in lines."""

    name: str
    lines: int


def module_name(path: Path) -> str:
    """mca/ui/repl.py -> mca.ui.repl; mca/ui/__init__.py -> mca.ui."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of mca/, by dotted name (read once: treat it as read-only)."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def tree(module: str) -> ast.Module:
    """A module's syntax tree (parsed once)."""
    return ast.parse(modules()[module].read_text(encoding="utf-8"))


def long_modules(limit: int = MODULE_LIMIT) -> list[Long]:
    """Modules over `limit` lines."""
    found = [Long(n, len(p.read_text(encoding="utf-8").splitlines())) for n, p in modules().items()]
    return [m for m in found if m.lines > limit]


def long_functions(limit: int = FUNCTION_LIMIT) -> list[Long]:
    """Functions (methods and nested ones included) over `limit` lines."""
    found = []
    for name in modules():
        for node in ast.walk(tree(name)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > limit:
                    found.append(Long(f"{name}:{node.lineno} {node.name}", lines))
    return found


def top_level(paths: list[Path] | None = None) -> list[str]:
    """The modules directly in mca/ (`paths`: another tree's files, for a test)."""
    paths = list(modules().values()) if paths is None else paths
    return sorted(p.name for p in paths if p.parent == PACKAGE)


def twins(paths: list[Path] | None = None) -> dict[str, list[str]]:
    """File names (but __init__.py) used by more than one module: name -> their paths."""
    paths = list(modules().values()) if paths is None else paths
    found: dict[str, list[str]] = {}
    for p in paths:
        if p.name != "__init__.py":
            found.setdefault(p.name, []).append(p.relative_to(ROOT).as_posix())
    return {name: sorted(where) for name, where in sorted(found.items()) if len(where) > 1}


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def forbidden(
    graph: dict[str, set[str]] | None = None,
    rules: tuple[tuple[str, str], ...] = FORBIDDEN,
) -> list[str]:
    """Every import a boundary forbids: 'a -> b'."""
    graph = imports() if graph is None else graph
    return [
        f"{module} -> {t}"
        for module, targets in sorted(graph.items())
        for t in sorted(targets)
        for importer, imported in rules
        if _under(module, importer) and _under(t, imported)
    ]


def _resolve(name: str, node: ast.ImportFrom, known: dict[str, Path]) -> str:
    if not node.level:
        return node.module or ""
    package = name.split(".") if known[name].name == "__init__.py" else name.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(name: str, tree: ast.Module, known: dict[str, Path]) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(name, node, known)
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                yield sub if sub in known else module


def imports() -> dict[str, set[str]]:
    """mca's import graph: module -> the mca modules it imports (anywhere in it)."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name in known:
        graph[name] = {t for t in _targets(name, tree(name), known) if t in known and t != name}
    return graph


def cycles(graph: dict[str, set[str]] | None = None) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    graph = imports() if graph is None else graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


class Layers(NamedTuple):
    """The layers, top first, and the path patterns of each (docs/ARCHITECTURE.md)."""

    names: list[str]
    patterns: list[list[str]]

    def of(self, module: str) -> int:
        """The layer a module is in: its most specific entry (a file over a glob over a
        directory); a module no entry names is in the last layer."""
        path = modules()[module].relative_to(ROOT).as_posix()
        best, rank = len(self.names) - 1, 0
        for i, patterns in enumerate(self.patterns):
            for p in patterns:
                found = _specificity(p, path)
                if found > rank:
                    best, rank = i, found
        return best


def _specificity(pattern: str, path: str) -> int:
    if pattern.endswith("/"):
        return 1 if path.startswith(pattern) else 0
    if "*" in pattern:
        return 2 if fnmatch.fnmatch(path, pattern) else 0
    return 3 if path == pattern else 0


def layers(text: str | None = None) -> Layers:
    """The layer table of docs/ARCHITECTURE.md (`text`: another document's)."""
    text = DOC.read_text(encoding="utf-8") if text is None else text
    table = text[text.index("| layer | modules |") :].split("\n\n", 1)[0]
    names, patterns = [], []
    for row in table.splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        names.append(cells[0])
        patterns.append(re.findall(r"`(mca/[^`]*)`", cells[1]))
    return Layers(names, patterns)


def upward(graph: dict[str, set[str]] | None = None, table: Layers | None = None) -> list[str]:
    """Every import that goes to a layer above its module's: 'a (layer) -> b (layer)'."""
    graph = imports() if graph is None else graph
    table = layers() if table is None else table
    found = []
    for module, targets in sorted(graph.items()):
        mine = table.of(module)
        for t in sorted(targets):
            if table.of(t) < mine:
                theirs = table.names[table.of(t)]
                found.append(f"{module} ({table.names[mine]}) -> {t} ({theirs})")
    return found


def main() -> int:
    """Print the measures; exit 0 (the test holds the limits)."""
    sys.setrecursionlimit(10_000)
    mods, funcs, loops, crossing = long_modules(), long_functions(), cycles(), upward()
    loose, doubled, barred = top_level(), twins(), forbidden()
    print(f"modules over {MODULE_LIMIT} lines: {len(mods)}")
    for m in mods:
        print(f"  {m.name} {m.lines}")
    print(f"functions over {FUNCTION_LIMIT} lines: {len(funcs)}")
    for f in funcs:
        print(f"  {f.name} {f.lines}")
    print(f"import cycles: {len(loops)}")
    for c in loops:
        print("  " + " <-> ".join(c))
    print(f"imports up a layer: {len(crossing)}")
    for line in crossing:
        print(f"  {line}")
    print(f"modules at mca/'s top level: {len(loose)} (limit {TOP_LEVEL_LIMIT})")
    print(f"  {' '.join(loose)}")
    print(f"file names used twice: {len(doubled)}")
    for name, where in doubled.items():
        print(f"  {name}: {', '.join(where)}")
    print(f"imports a boundary forbids: {len(barred)}")
    for line in barred:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
