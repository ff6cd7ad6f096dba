"""docs/ARCHITECTURE.md stays true: every path its "where to change X" table names exists, and
the boundaries it draws hold (the faces never reach into the agent; the sandbox imports nothing
of mca's but fsutil and the workspace store)."""

from __future__ import annotations

import ast
import re

from tests.conftest import REPO

DOC = REPO / "docs" / "ARCHITECTURE.md"


def test_every_path_in_the_where_to_change_table_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| to change | touch |") :]
    paths = re.findall(r"`((?:mca|tests|docs)/[\w./]+)`", table)
    assert len(paths) >= 20
    assert [p for p in paths if not (REPO / p).exists()] == []


def _imports(path: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse((REPO / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_the_sandbox_imports_nothing_of_mca_but_fsutil_and_the_workspace() -> None:
    allowed = {"mca.fsutil", "mca.workspace", "mca.workspace.protect"}
    for module in sorted((REPO / "mca" / "sandbox").glob("*.py")):
        if module.name == "settings.py":  # the bridge from Settings, by design
            continue
        theirs = {m for m in _imports(str(module.relative_to(REPO))) if m.startswith("mca")}
        assert theirs <= allowed | {m for m in theirs if m.startswith("mca.sandbox")}


def test_the_faces_never_reach_into_the_agent() -> None:
    for module in sorted((REPO / "mca" / "ui").glob("*.py")):
        assert ".agent." not in module.read_text(encoding="utf-8"), module.name
