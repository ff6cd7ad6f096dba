"""The child's kit (mca/lab/childkit.py) holds none of mca's five answers, by any path: not in
its modules' code (the answers are stubs), not in its files' text, not in the memory of a child
that imports every module of it; the child imports nothing from mca's own tree."""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import stat
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from mca.lab.childkit import answers, ensure_kit, kit_files, strip
from mca.lab.exercises import EXERCISES
from mca.lab.launch import BOOT, Isolation, Limits, child_argv, child_read_paths
from mca.skills.policy import PRODUCTION

MCA_TREE = str(Path(inspect.getfile(PRODUCTION.split)).resolve().parent.parent)


def _production() -> dict[str, types.FunctionType]:
    return {e.field: getattr(PRODUCTION, e.field) for e in EXERCISES}


def _fingerprint(code: types.CodeType) -> str:
    return hashlib.sha256(code.co_code + repr(code.co_names).encode()).hexdigest()


def _codes(code: types.CodeType) -> list[types.CodeType]:
    out = [code]
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out += _codes(c)
    return out


def _windows(lines: list[str], size: int = 4) -> set[tuple[str, ...]]:
    """Every run of `size` consecutive non-blank lines, stripped (indentation aside)."""
    kept = [ln.strip() for ln in lines if ln.strip()]
    return {tuple(kept[i : i + size]) for i in range(len(kept) - size + 1)}


def _body(fn: types.FunctionType) -> list[str]:
    """The lines of a function below its signature and docstring."""
    source = inspect.getsource(fn)
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    first = node.body[1] if ast.get_docstring(node) else node.body[0]
    return source.splitlines()[first.lineno - 1 :]


def test_the_five_answers_are_the_policy_fields_and_each_kit_copy_is_a_stub() -> None:
    found = {(m, n) for m, names in answers().items() for n in names}
    assert found == {(f.__module__, f.__name__) for f in _production().values()}
    files = kit_files()
    for fn in _production().values():
        rel = fn.__module__.replace(".", "/") + ".py"
        tree = compile(files[rel], rel, "exec")
        stub = next(c for c in tree.co_consts if getattr(c, "co_name", "") == fn.__name__)
        assert "absent" in stub.co_names, fn.__name__


def test_no_code_and_no_text_of_an_answer_is_in_the_kit() -> None:
    files = kit_files()
    prints = {_fingerprint(f.__code__): name for name, f in _production().items()}
    text = b"\n".join(files.values()).decode("utf-8", "replace")
    for rel, data in files.items():
        if rel.endswith(".py"):
            for code in _codes(compile(data, rel, "exec")):
                assert _fingerprint(code) not in prints, (rel, code.co_name)
    kit = set().union(
        *(_windows(d.decode("utf-8", "replace").splitlines()) for d in files.values())
    )
    for name, fn in _production().items():
        body = _body(fn)
        assert len(_windows(body)) >= 3, name  # the search below has something to find
        assert _windows(body) & kit == set(), name  # no four lines of it in a row, anywhere
        assert inspect.getsource(fn) not in text


def test_strip_replaces_only_the_named_functions() -> None:
    source = "import re\n\n\n@dec\ndef a(x):\n    return x\n\n\ndef b():\n    return 2\n"
    out = strip(source, ("a",))
    assert "return x" not in out and "@dec" not in out and "def b():\n    return 2\n" in out
    assert "absent('a')" in out
    with pytest.raises(ValueError):
        strip(source, ("c",))


# Run inside a child started as the grader starts it: import every module of the kit, then
# report every function the interpreter holds (gc) and where sys.path and mca come from.
PROBE = """
import gc, hashlib, importlib, json, os, sys, types
sys.path.insert(0, sys.argv[1])
root = os.path.join(sys.argv[1], "mca")
for d, _, names in os.walk(root):
    for n in names:
        if n.endswith(".py"):
            rel = os.path.relpath(os.path.join(d, n), sys.argv[1])[:-3].replace(os.sep, ".")
            importlib.import_module(rel.removesuffix(".__init__"))
def walk(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from walk(c)
prints, files = [], set()
for o in gc.get_objects():
    if isinstance(o, types.FunctionType):
        for c in walk(o.__code__):
            prints.append(hashlib.sha256(c.co_code + repr(c.co_names).encode()).hexdigest())
            files.add(c.co_filename)
mods = [getattr(m, "__file__", None) or "" for m in list(sys.modules.values())]
print(json.dumps({"prints": prints, "files": sorted(files), "path": sys.path, "modules": mods}))
"""


@pytest.mark.slow
def test_a_child_that_imports_all_of_the_kit_holds_no_answer(tmp_path: Path) -> None:
    kit = ensure_kit(tmp_path / "kit")
    argv = child_argv(kit, (0, 1))
    assert argv[1:4] == ["-I", "-S", "-c"] and argv[4] == BOOT and argv[5] == str(kit)
    probe = [*argv[:4], PROBE, str(kit)]
    done = subprocess.run(probe, capture_output=True, text=True, timeout=120, env={})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    prints = {_fingerprint(f.__code__) for f in _production().values()}
    assert len(seen["prints"]) > 1000  # every function of the kit, and the stdlib's
    assert prints.isdisjoint(seen["prints"])
    inside = [p for p in seen["files"] + seen["modules"] if p.startswith(MCA_TREE + "/")]
    assert inside == []
    assert all(not p.startswith(MCA_TREE) for p in seen["path"])
    assert str(kit) in seen["path"]


def test_the_kit_is_read_only_files_in_open_directories_and_written_once(tmp_path: Path) -> None:
    kit = ensure_kit(tmp_path / "kit")
    assert child_read_paths(kit) == [kit]
    marker = kit / "mca" / "__init__.py"
    before = marker.stat().st_ino
    assert ensure_kit(tmp_path / "kit") == kit and marker.stat().st_ino == before
    for p in [kit, *kit.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode == (0o755 if p.is_dir() else 0o444), (p, oct(mode))
    assert sorted(str(p.relative_to(kit)) for p in kit.rglob("*") if p.is_file()) == sorted(
        kit_files()
    )
    isolation = Isolation(None, tmp_path, tmp_path / "mca", tmp_path / "home")
    assert isolation.kit.parent == tmp_path
    isolation.launcher(Limits()).close()
    assert (isolation.kit / "mca" / "lab" / "serve.py").is_file()
    assert sys.executable  # the kit runs on the grader's own interpreter
