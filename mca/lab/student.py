"""A student's exercises.py as a Policy: each function it defines replaces the starter's in its
slot, checked for what it returns, so a wrong type is a clear failure of that check.

This module loads and calls student code in the calling process: the REPL and `mca skills` with
MCA_LAB=exercises.py use it on the student's own machine. The self-test and the grader never do:
their student code runs in a child (mca/lab/serve.py) that only answers calls.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from mca.errors import McaError
from mca.lab import naive
from mca.lab.exercises import EXERCISES, Exercise
from mca.lab.forbidden import FORBIDDEN
from mca.skills.policy import PRODUCTION, Policy


class StudentError(McaError):
    """The exercises file cannot be used as it is (it does not load, or imports too much)."""


# Python 3.11's parser keeps its recursion depth in state the threads share: two graders'
# threads parsing at once can fail with "SystemError: AST constructor recursion depth
# mismatch" (CPython gh-106905). One parse at a time.
_PARSE = threading.Lock()


def parse(source: str) -> ast.Module:
    """ast.parse, one thread at a time."""
    with _PARSE:
        return ast.parse(source)


def forbidden_imports(source: str, tree: ast.Module | None = None) -> list[str]:
    """'subprocess (line 3)' for every forbidden import in the source (or its parsed tree)."""
    found = []
    for node in ast.walk(tree or parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        found += [f"{n} (line {node.lineno})" for n in names if n.split(".")[0] in FORBIDDEN]
    return found


def _returns(exercise: Exercise, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        value = fn(*args, **kwargs)
        if not exercise.ok(value):
            shown = type(value).__name__
            raise TypeError(f"{fn.__name__} returned {shown!r:.60}, not {exercise.returns}")
        return value

    return checked


def load_exercises(path: Path) -> Policy:
    """The Policy of an exercises.py: its functions where it defines them, the starter's
    elsewhere. StudentError when it cannot be read, imports something forbidden, or fails to
    import; the message says which."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise StudentError(f"{path}: cannot read it ({e})") from None
    try:
        bad = forbidden_imports(source)
    except SyntaxError as e:
        raise StudentError(f"{path}: line {e.lineno}: {e.msg}") from None
    if bad:
        raise StudentError(f"{path}: imports what an exercise must not: {', '.join(bad)}")
    spec = importlib.util.spec_from_file_location(f"mca_exercises_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise StudentError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # where a dataclass of the file looks up its names
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # the student's module failed at import: the message
        raise StudentError(f"{path}: importing it failed: {type(e).__name__}: {e}") from None
    finally:
        sys.modules.pop(spec.name, None)
    swaps: dict[str, Any] = {}
    own = []
    for exercise in EXERCISES:
        fn = getattr(module, exercise.function, None)
        if callable(fn):
            own.append(exercise.function)
        else:
            fn = getattr(naive, exercise.function)
        swaps[exercise.field] = _returns(exercise, fn)
    return replace(PRODUCTION, name=f"exercises({path.name}: {', '.join(own) or 'none'})", **swaps)
