"""docs/ARCHITECTURE.md stays true: every path its "where to change X" table names exists, the
layers its table draws hold (every import goes to its module's layer or one below), no import
cycle comes back (type-only and deferred imports count), the size limits hold, the floor plan
holds (at most 15 modules loose at mca/'s top level, no file name used twice, no tool importing
a skills module), and the boundaries it names hold (the faces never reach into the agent; the
sandbox imports nothing of mca's but fs/careful.py and the workspace store's protected paths and
repositories). Each limit has a companion test showing it would catch a violation. `python -m
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


def test_a_long_module_or_function_would_be_found() -> None:
    assert measures.long_modules(limit=10) != []
    assert len(measures.long_functions(limit=10)) > 3


def test_at_most_15_modules_lie_loose_at_the_top() -> None:
    loose = measures.top_level()
    assert "__main__.py" in loose and "agent.py" in loose
    assert len(loose) <= measures.TOP_LEVEL_LIMIT, loose


def test_a_16th_loose_module_would_be_found() -> None:
    paths = list(measures.modules().values())
    extra = [measures.PACKAGE / f"loose_{i}.py" for i in range(16)]
    assert len(measures.top_level(paths + extra)) > measures.TOP_LEVEL_LIMIT
    assert len(measures.top_level([measures.PACKAGE / "ui" / "x.py"])) == 0


def test_no_file_name_is_used_twice() -> None:
    assert measures.twins() == {}


def test_a_file_name_used_twice_would_be_found() -> None:
    paths = list(measures.modules().values())
    twin = measures.PACKAGE / "tools" / "gates.py"  # skills/gates.py exists
    assert measures.twins([*paths, twin]) == {
        "gates.py": ["mca/skills/gates.py", "mca/tools/gates.py"]
    }
    packages = [measures.PACKAGE / "__init__.py", measures.PACKAGE / "ui" / "__init__.py"]
    assert measures.twins(packages) == {}  # every package has one


def test_no_tool_imports_a_skills_module() -> None:
    assert measures.forbidden() == []


def test_a_tool_importing_a_skills_module_would_be_found() -> None:
    graph = measures.imports()
    graph["mca.tools.files"] = graph["mca.tools.files"] | {"mca.skills.model"}
    assert measures.forbidden(graph) == ["mca.tools.files -> mca.skills.model"]
    graph["mca.tools"] = graph["mca.tools"] | {"mca.skills"}  # the packages themselves count
    assert "mca.tools -> mca.skills" in measures.forbidden(graph)


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
    allowed |= {"mca.workspace.pending"}  # the protected paths' record, on disk during a command
    for module in sorted((REPO / "mca" / "sandbox").rglob("*.py")):  # spawning/ too
        theirs = {m for m in _imports(str(module.relative_to(REPO))) if m.startswith("mca")}
        assert theirs <= allowed | {m for m in theirs if m.startswith("mca.sandbox")}, module


def test_the_faces_never_reach_into_the_agent() -> None:
    for module in sorted((REPO / "mca" / "ui").rglob("*.py")):
        assert ".agent." not in module.read_text(encoding="utf-8"), module.name
