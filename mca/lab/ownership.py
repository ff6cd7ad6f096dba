"""Whether an exercise's function is the student's own: read from the file's syntax tree in the
grader (where the child cannot lie about it), and from the child's report of where each
function's code comes from. A function bound by an import, or whose code is mca's (a re-export,
mca's own code object under another name), is 'not your code' for its exercise; one the file
does not define at all keeps the starter's version, as the kit says.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from mca.lab.exercises import EXERCISES, Exercise


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run when the module is imported, in order (not function bodies)."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.For | ast.While | ast.With | ast.Try):
            for block in ("body", "orelse", "finalbody"):
                yield from _top_level(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                yield from _top_level(handler.body)


def bindings(tree: ast.Module) -> dict[str, str]:
    """How the file's top level last binds each exercise's name: 'def', 'import NAME' or
    'assigned' (absent names are left out)."""
    wanted = {e.function for e in EXERCISES}
    found: dict[str, str] = {}
    for node in _top_level(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in wanted:
            found[node.name] = "def"
        elif isinstance(node, ast.Import | ast.ImportFrom):
            module = getattr(node, "module", None) or ""
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                if name in wanted:
                    found[name] = f"import {module + '.' if module else ''}{alias.name}"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and n.id in wanted:
                        found[n.id] = "assigned"
    return found


def not_yours(exercise: Exercise, static: Mapping[str, str], owner: str) -> str:
    """Why the function is not the student's own ('' when it is, or is the starter's)."""
    fn = exercise.function
    how = static.get(fn, "")
    if how.startswith("import "):
        return f"not your code: {fn} is imported ({how}), not written in exercises.py"
    if owner.startswith("mca:"):
        return f"not your code: {fn} is mca's own ({owner[4:]})"
    if owner.startswith("other:"):
        return f"not your code: {fn} is not defined in exercises.py ({owner[6:][:80]})"
    return ""
