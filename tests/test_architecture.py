"""docs/ARCHITECTURE.md stays true: every path its "where to change X" table names exists, the
layers its table draws hold (every import goes to its module's layer or one below), no import
cycle comes back (type-only and deferred imports count), the size limits hold, and the
boundaries it names hold (the faces never reach into the agent; the sandbox imports nothing of
mca's but fs/careful.py and the workspace store's protected paths and repositories). `python -m
tests.measures` prints the same measures."""

from __future__ import annotations

import ast

from tests import measures
from tests.conftest import REPO

DOC = REPO / "docs" / "ARCHITECTURE.md"


def test_every_path_in_the_where_to_change_table_exists() -> None:
    import re

    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| to change | touch |") :]
    paths = re.findall(r"`((?:mca|tests|docs)/[\w./]+)`", table)
    assert len(paths) >= 20
    assert [p for p in paths if not (REPO / p).exists()] == []


def test_no_import_cycle() -> None:
    assert measures.cycles() == []


def test_a_new_cycle_would_be_found() -> None:
    graph = measures.imports()
    graph["mca.types"] = graph["mca.types"] | {
        "mca.session.session"
    }  # session imports types already
    found = measures.cycles(graph)
    assert any({"mca.types", "mca.session.session"} <= set(c) for c in found)


def test_every_import_stays_in_its_layer_or_goes_down() -> None:
    table = measures.layers()
    assert table.names[0] == "entry" and table.names[-1] == "data"
    assert measures.upward() == []


def test_an_import_up_a_layer_would_be_found() -> None:
    graph = measures.imports()
    graph["mca.workspace.store"] = graph["mca.workspace.store"] | {"mca.config.settings"}
    assert measures.upward(graph) == [
        "mca.workspace.store (services) -> mca.config.settings (assembly)"
    ]


def test_every_layer_entry_names_modules_that_exist() -> None:
    table = measures.layers()
    files = [p.relative_to(REPO).as_posix() for p in measures.modules().values()]
    for patterns in table.patterns:
        for p in patterns:
            assert any(measures._specificity(p, f) for f in files), p


def test_sizes() -> None:
    assert measures.long_modules() == []
    assert len(measures.long_functions()) <= 3


def _imports(path: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse((REPO / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_the_sandbox_imports_nothing_of_mca_but_careful_io_and_the_workspace() -> None:
    allowed = {"mca.fs.careful", "mca.workspace", "mca.workspace.protect"}
    allowed |= {"mca.workspace.repos", "mca.workspace.gitconfig"}  # the repositories inside
    for module in sorted((REPO / "mca" / "sandbox").glob("*.py")):
        theirs = {m for m in _imports(str(module.relative_to(REPO))) if m.startswith("mca")}
        assert theirs <= allowed | {m for m in theirs if m.startswith("mca.sandbox")}, module


def test_the_faces_never_reach_into_the_agent() -> None:
    for module in sorted((REPO / "mca" / "ui").glob("*.py")):
        assert ".agent." not in module.read_text(encoding="utf-8"), module.name
