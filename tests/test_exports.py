"""A module another layer imports from says what it offers in `__all__`, every name there is
the module's, and nothing else is imported from it across layers (the layers are
docs/ARCHITECTURE.md's; tests/measures.py reads them)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tests import measures


def _exported(module: str) -> list[str] | None:
    """The module's `__all__` (None: it has none)."""
    for node in measures.tree(module).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return [str(name) for name in ast.literal_eval(node.value)]
    return None


def _defined(module: str) -> set[str]:
    names: set[str] = set()
    for node in measures.tree(module).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.If):  # TYPE_CHECKING imports re-exported for typing
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    names.update(a.asname or a.name for a in inner.names)
    return names


def _across() -> Iterator[tuple[str, str, str]]:
    """(importer, module, name) for each `from module import name` across a layer in mca/."""
    known, table = measures.modules(), measures.layers()
    for importer in known:
        for node in ast.walk(measures.tree(importer)):
            if not isinstance(node, ast.ImportFrom) or node.level or node.module not in known:
                continue
            module = node.module
            if table.of(module) == table.of(importer):
                continue
            for alias in node.names:
                if f"{module}.{alias.name}" not in known:  # a submodule is no name
                    yield importer, module, alias.name


def test_a_module_imported_across_layers_has_all_and_offers_what_is_taken() -> None:
    missing_all: set[str] = set()
    not_offered: list[str] = []
    for importer, module, name in _across():
        offered = _exported(module)
        if offered is None:
            missing_all.add(module)
        elif name not in offered:
            not_offered.append(f"{importer} takes {module}.{name}, which it does not offer")
    assert sorted(missing_all) == [] and not_offered == []


def test_every_name_in_all_is_the_modules() -> None:
    wrong = []
    for module in measures.modules():
        offered = _exported(module)
        if offered is not None:
            wrong += [f"{module}.{n}" for n in offered if n not in _defined(module)]
    assert wrong == []
