"""The lab stays behind its boundary: no production module imports mca.lab.

Only the lab itself, the self-test that runs it and the command line that wires it in may.
Imports are read from the syntax tree of every module under mca/ (in functions, under
TYPE_CHECKING, relative ones, and importlib calls with a literal name), not grepped.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

MCA = REPO / "mca"
ALLOWED = ("mca/cli/selftest.py", "mca/cli/args.py", "mca/cli/start.py")  # the command line


def _module_of(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str, is_package: bool = False) -> list[str]:
    """Every module name an import in `source` (the text of `module`) can load."""
    package = module if is_package else module.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                up = parts[: len(parts) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names += [base, *(f"{base}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Call) and node.args:
            fn = node.func
            called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            arg = node.args[0]
            if called in ("import_module", "__import__") and isinstance(arg, ast.Constant):
                names.append(str(arg.value))
    return names


def lab_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """The imported names that are mca.lab or inside it."""
    names = imported(source, module, is_package)
    return [n for n in names if n == "mca.lab" or n.startswith("mca.lab.")]


def test_no_production_module_imports_the_lab() -> None:
    offenders = {}
    for path in sorted(MCA.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith("mca/lab/") or rel in ALLOWED:
            continue
        source = path.read_text(encoding="utf-8")
        found = lab_imports(source, _module_of(path), path.name == "__init__.py")
        if found:
            offenders[rel] = found
    assert offenders == {}


def test_the_allowed_modules_do_import_it() -> None:
    """The walk above reads real imports: the modules allowed to import the lab are seen to."""
    for rel in ALLOWED:
        path = REPO / rel
        assert lab_imports(path.read_text(encoding="utf-8"), _module_of(path)), rel


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("import mca.lab.suite", "mca.skills.x"),
        ("from mca.lab import naive", "mca.skills.x"),
        ("from mca import lab", "mca.x"),
        ("from .lab import policies", "mca.x"),
        ("from ..lab.exercises import TRAPS", "mca.skills.x"),
        ("def f():\n    from mca.lab.policies import select_policy", "mca.x"),
        ("if TYPE_CHECKING:\n    from mca.lab.suite import Check", "mca.x"),
        ("importlib.import_module('mca.lab.policies')", "mca.x"),
    ],
)
def test_every_way_of_importing_the_lab_is_seen(source: str, module: str) -> None:
    assert lab_imports(source, module)


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("import mca.labels", "mca.x"),
        ("from mca import lab_notes", "mca.x"),
        ("from .skills import policy", "mca.x"),
        ("x = 'mca.lab is mentioned in a string'", "mca.x"),
    ],
)
def test_names_that_only_look_alike_are_not(source: str, module: str) -> None:
    assert not lab_imports(source, module)
