"""A student's exercises.py as a Policy: each function it defines replaces the starter's in its
slot, checked for what it returns, so a wrong type is a clear failure of that check.

This module loads and calls student code; the self-test and the grader only do that in a child
process (mca/lab/runner.py), where a crash or a hang costs that child alone. That is isolation
against accidents, not a security sandbox: the code runs with the user's rights.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from mca.errors import McaError
from mca.skills import naive
from mca.skills.gates import Decision
from mca.skills.inject import Block
from mca.skills.model import Candidate
from mca.skills.policy import PRODUCTION, SLOTS, Policy
from mca.skills.trigger import Hit

# Modules an exercise has no business importing: the network, other processes, raw memory.
FORBIDDEN = frozenset(
    {
        "socket", "ssl", "subprocess", "multiprocessing", "ctypes", "pty", "urllib", "http",
        "httpx", "requests", "ftplib", "smtplib", "telnetlib", "asyncio", "concurrent",
    }
)  # fmt: skip


class StudentError(McaError):
    """The exercises file cannot be used as it is (it does not load, or imports too much)."""


def forbidden_imports(source: str) -> list[str]:
    """'subprocess (line 3)' for every forbidden import in the source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        found += [f"{n} (line {node.lineno})" for n in names if n.split(".")[0] in FORBIDDEN]
    return found


def _returns(what: str, ok: Callable[[Any], bool], fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        value = fn(*args, **kwargs)
        if not ok(value):
            shown = type(value).__name__
            raise TypeError(f"{fn.__name__} returned {shown!r:.60}, not {what}")
        return value

    return checked


def _is_split(v: Any) -> bool:
    return (
        isinstance(v, tuple)
        and len(v) == 3
        and isinstance(v[0], str)
        and isinstance(v[1], str)
        and isinstance(v[2], int)
    )


CONTRACTS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "split": ("a (frontmatter, body, line) tuple", _is_split),
    "validate": ("a Candidate", lambda v: isinstance(v, Candidate)),
    "script": ("a Block", lambda v: isinstance(v, Block)),
    "judge": (
        "a list of Hit",
        lambda v: isinstance(v, list) and all(isinstance(h, Hit) for h in v),
    ),
    "gates": (
        "a list of Decision",
        lambda v: isinstance(v, list) and all(isinstance(d, Decision) for d in v),
    ),
}


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
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # the student's module failed at import: the message
        raise StudentError(f"{path}: importing it failed: {type(e).__name__}: {e}") from None
    finally:
        sys.modules.pop(spec.name, None)
    swaps: dict[str, Any] = {}
    own = []
    for trap, (fn_name, fld) in SLOTS.items():
        fn = getattr(module, fn_name, None)
        if callable(fn):
            own.append(fn_name)
        else:
            fn = getattr(naive, fn_name)
        what, ok = CONTRACTS[trap]
        swaps[fld] = _returns(what, ok, fn)
    return replace(PRODUCTION, name=f"exercises({path.name}: {', '.join(own) or 'none'})", **swaps)
