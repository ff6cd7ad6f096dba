"""The child's kit: the only mca that the process running a student's code can import or read.

Once per run the grader writes, into the run's private directory, a copy of the modules the
child imports (mca/lab/serve.py, the naive starter and what they import, found by reading
their import statements) and the data files those modules read, with each of mca's five
production answers (the Policy's fields), and every function or class that only an answer uses
(its private machinery: judge's scoring, the gates' winners, validate's checker), replaced by a
stub that calls mca/lab/absent.py. The
child runs `python -I -S` with the kit and the standard library on its path and nothing else
(mca/lab/launch.py), so the answers are in none of its modules, objects or readable files:
there is nothing to borrow, reload, decompile or read back, whatever runs in that interpreter.
The data types and neutral helpers stay where the starter imports them from.
"""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import mca

__all__ = [
    "DATA",
    "KIT_NAME",
    "ROOTS",
    "answers",
    "ensure_kit",
    "kit_files",
    "strip",
    "stubbed",
    "stubs",
]

MCA_DIR = Path(mca.__file__).resolve().parent
# What the child imports first: the server, the starter it falls back on, the stubs' module,
# and the Policy (a hand-in that imports PRODUCTION still loads, and gets the stubs).
ROOTS = ("mca.lab.serve", "mca.lab.naive", "mca.lab.absent", "mca.skills.policy")
DATA = (  # read by the judgment (its model, its background and competitors)
    "data/judgment.json",
    "data/rivals.tsv",
    "data/background.txt",
    "data/common-words.txt",
)
KIT_NAME = "child-kit"  # its directory, inside the run's private directory
_BUILD = threading.Lock()


def answers() -> dict[str, tuple[str, ...]]:
    """The five production answers: module -> the names of its functions that are answers."""
    from mca.lab.exercises import EXERCISES
    from mca.skills.policy import PRODUCTION

    out: dict[str, tuple[str, ...]] = {}
    for e in EXERCISES:
        fn = getattr(PRODUCTION, e.field)
        out[fn.__module__] = (*out.get(fn.__module__, ()), fn.__name__)
    return out


def _file(module: str) -> Path | None:
    """mca's source file for a module name (None: not a module of mca)."""
    parts = module.split(".")
    if parts[0] != "mca":
        return None
    base = MCA_DIR.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(tree: ast.Module) -> list[str]:
    """The mca modules a module imports (anywhere but under `if TYPE_CHECKING:`)."""
    found: list[str] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo += node.orelse
            continue
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        todo += ast.iter_child_nodes(node)
    return [m for m in found if m.split(".")[0] == "mca"]


def _closure() -> list[Path]:
    """Every source file the roots import, their packages' __init__.py files included."""
    seen: dict[Path, None] = {}
    todo = list(ROOTS)
    while todo:
        module = todo.pop()
        parts = module.split(".")
        for i in range(1, len(parts) + 1):  # the packages on the way, then the module
            path = _file(".".join(parts[:i]))
            if path is None or path in seen:
                continue
            seen[path] = None
            todo += _imports(ast.parse(path.read_text(encoding="utf-8")))
    return sorted(seen)


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def stubbed(source: str, answers: tuple[str, ...], used: set[str]) -> list[str]:
    """What of an answer's module becomes a stub: every function or class but those another
    module of the kit imports (`used`: the data types, the starter's helpers) or the module's
    own top-level statements use, and what those lead to; never an answer. A helper nothing
    else needs is part of an answer (mca's gate for one skill, its word matching): kept, it
    would rebuild one in a few lines."""
    tree = ast.parse(source)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    refs = {name: _names_in(node) & set(defs) for name, node in defs.items()}
    top = set().union(
        *(_names_in(n) for n in tree.body if not isinstance(n, ast.FunctionDef | ast.ClassDef))
    )
    keep = ((used | top) & set(defs)) - set(answers)
    todo = list(keep)
    while todo:
        for r in refs[todo.pop()] - keep - set(answers):
            keep.add(r)
            todo.append(r)
    return [name for name in defs if name not in keep]


def strip(source: str, names: Sequence[str]) -> str:
    """The module's source with each named top-level function or class replaced by a stub."""
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    kinds = ast.FunctionDef | ast.ClassDef
    found = [n for n in tree.body if isinstance(n, kinds) and n.name in names]
    if {n.name for n in found} != set(names):
        raise ValueError(f"not all of {', '.join(names)} are top-level functions or classes")
    for node in sorted(found, key=lambda n: -n.lineno):
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        stub = (
            f"def {node.name}(*args, **kwargs):  # mca's answer is not in the grader's child\n"
            "    from mca.lab.absent import absent\n\n"
            f"    absent({node.name!r})\n"
        )
        lines[start : node.end_lineno] = [stub]
    return "".join(lines)


def stubs() -> dict[str, list[str]]:
    """Module -> what of it the kit holds as stubs (see `stubbed`)."""
    files = _closure()
    used: dict[str, set[str]] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                used.setdefault(node.module, set()).update(a.name for a in node.names)
    out = {}
    for module, names in answers().items():
        where = _file(module)
        assert where is not None and where in files, module
        source = where.read_text(encoding="utf-8")
        out[module] = stubbed(source, names, used.get(module, set()) - set(names))
    return out


def kit_files() -> dict[str, bytes]:
    """The kit: path relative to its directory -> content."""
    stubs_of = stubs()
    out: dict[str, bytes] = {}
    for path in _closure():
        rel = path.relative_to(MCA_DIR.parent).as_posix()
        module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        text = path.read_text(encoding="utf-8")
        if module in stubs_of:
            text = strip(text, stubs_of[module])
        out[rel] = text.encode("utf-8")
    for rel in DATA:
        out[f"mca/{rel}"] = (MCA_DIR / rel).read_bytes()
    return out


def ensure_kit(dest: Path) -> Path:
    """The kit at `dest`, written once (every hand-in of the run shares it): files 0o444 in
    directories 0o755, so a sandboxed child reads it, writes nothing, and it can be removed."""
    with _BUILD:
        if dest.is_dir():
            return dest
        part = Path(tempfile.mkdtemp(prefix=".kit-", dir=dest.parent))
        try:
            for rel, data in kit_files().items():
                target = part / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                target.chmod(0o444)
            for d, _, _ in os.walk(part):
                os.chmod(d, 0o755)
            part.rename(dest)
        except BaseException:
            shutil.rmtree(part, ignore_errors=True)
            raise
    return dest
