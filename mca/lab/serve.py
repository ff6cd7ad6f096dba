"""The child that holds one student's exercises.py and nothing else (started from the child's
kit, mca/lab/childkit.py: mca's five answers are stubs there, absent from this process).

It reads the file's source from the grader (never from disk), runs it as a module, says which
of the five functions the file defines itself, then answers calls to them, one JSON line per
call (mca/lab/calls.py). It runs no check and decides no verdict: whatever the student's code
does here (patch mca, print, write to the pipe, crash) can change only its own answers, which
the grader validates. A student function that calls one of mca's answers reaches a stub
(mca/lab/absent.py) and is 'not your code'.

A second line behind the operating system's sandbox: once mca is loaded, an audit hook refuses
processes, signals, sockets and ctypes, and the imports that lead to them, from any thread.
"""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from mca.lab import absent
from mca.lab.calls import CODECS, CONTRACT_ERRORS
from mca.lab.exercises import EXERCISES
from mca.lab.forbidden import FORBIDDEN
from mca.lab.wire import WireError

# Audit events a student's code may never cause (prefixes), and modules it may never import.
BLOCKED_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.killpg",
    "os.startfile",
    "pty.",
    "socket.",
    "ctypes.",
)
# The file may not name these (mca/lab/student.py), nor reach them another way: the C modules
# underneath count too.
BLOCKED_MODULES = FORBIDDEN | {
    "_socket", "_ssl", "_posixsubprocess", "_multiprocessing", "_ctypes", "_asyncio", "mmap",
}  # fmt: skip
MCA_DIR = str(Path(__file__).resolve().parent.parent)
STARTER = str(Path(__file__).resolve().parent / "naive.py")
MAX_MESSAGE = 300


@dataclass
class State:
    """The student's file, as its code objects name it."""

    filename: str = ""


STATE = State()


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event.startswith(BLOCKED_EVENTS):
        raise PermissionError(f"exercises.py may not start processes or use the network ({event})")
    if event == "import" and str(args[0]).split(".")[0] in BLOCKED_MODULES:
        raise ImportError(_what_the_file_imported(str(args[0])))


def _what_the_file_imported(blocked: str) -> str:
    """Why an import is refused, naming what the student's file itself imported: a module of
    its own choosing that needs `blocked` (mca.lab.checks needs subprocess), or `blocked`."""
    chain: list[str] = []  # the modules being imported, innermost first
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename != STATE.filename:
        if frame.f_code.co_name == "<module>":
            chain.append(str(frame.f_globals.get("__name__", "?")))
        frame = frame.f_back
    why = "a hand-in may not start processes or use the network"
    if frame is None or not chain:  # the file's own import (or not the file's doing)
        return f"the file imports {blocked} ({why})"
    return f"the file imports {chain[-1]}, which needs {blocked} ({why})"


class NotInKit:
    """The last finder: a module of mca the kit does not hold is named as such (the grader's
    modules are not in the child; mca's data types and the starter's helpers are)."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> None:
        if name.split(".")[0] == "mca":
            why = "exercises.py may import mca's data types and the starter's helpers only"
            raise ModuleNotFoundError(f"{name} is not in the grader's child ({why})", name=name)


def lock_down() -> None:
    """Forget the blocked modules mca itself imported (so importing one again is an import
    the hook sees), then refuse the events from any thread, student code or not."""
    for name in list(sys.modules):
        if name.split(".")[0] in BLOCKED_MODULES:
            del sys.modules[name]
    sys.meta_path.append(NotInKit())
    sys.addaudithook(_hook)


def _code_file(fn: Any) -> str:
    """The file a callable's code comes from ('' when it has no Python code)."""
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        wrapped = getattr(fn, "__wrapped__", None) or getattr(fn, "func", None)
        code = getattr(wrapped, "__code__", None)
    return code.co_filename if isinstance(code, types.CodeType) else ""


def whose(fn: Any, filename: str) -> str:
    """'own', 'starter' (not defined: the kit's version), or where its code comes from."""
    if fn is None or not callable(fn):
        return "starter"
    where = _code_file(fn)
    if where == filename:
        return "own"
    if where.startswith(MCA_DIR + os.sep):
        return "mca:" + os.path.relpath(where, os.path.dirname(MCA_DIR))
    return "other:" + (where or type(fn).__name__)


def load(source: str, filename: str) -> tuple[dict[str, Callable[..., Any]], dict[str, str]]:
    """The five functions to call (the starter's where the file has none), and whose each is."""
    from mca.lab import naive

    module = types.ModuleType("exercises")
    module.__file__ = filename
    sys.modules[module.__name__] = module  # where a dataclass of the file looks up its names
    STATE.filename = filename
    exec(compile(source, filename, "exec"), module.__dict__)
    functions: dict[str, Callable[..., Any]] = {}
    owners: dict[str, str] = {}
    for e in EXERCISES:
        fn: Any = module.__dict__.get(e.function)
        owners[e.field] = whose(fn, filename)
        functions[e.field] = getattr(naive, e.function) if owners[e.field] == "starter" else fn
    return functions, owners


def crash(e: BaseException, filename: str) -> dict[str, Any]:
    """What a crash was, and the student's line it came from (the innermost one)."""
    line = None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    try:
        text = str(e)
    except Exception:  # a student's exception whose __str__ fails: its type says enough
        text = ""
    return {"type": type(e).__name__, "message": text[:MAX_MESSAGE], "line": line}


def answer(request: Any, functions: dict[str, Callable[..., Any]], filename: str) -> Any:
    """One call: the student's function on the rebuilt arguments, its answer as data."""
    rid, which = request.get("id"), request.get("call")
    codec = CODECS[which]
    args = codec.args_in(request.get("args"))
    absent.CALLED.clear()
    try:
        value = functions[which](*args)
    except BaseException as e:  # the student's exception, whatever it is, is its answer
        if absent.CALLED:  # mca's answer was called: whatever followed is not an answer
            return {"id": rid, "not_yours": _borrowed(which)}
        contract = CONTRACT_ERRORS.get(which)
        if contract is not None and isinstance(e, contract):
            return {"id": rid, "raised": vars(e) | {"message": str(e)}}
        return {"id": rid, "crash": crash(e, filename)}
    if absent.CALLED:  # caught by the student's own code: still not theirs
        return {"id": rid, "not_yours": _borrowed(which)}
    try:
        return {"id": rid, "ok": codec.result_out(value, args)}
    except WireError as e:
        return {"id": rid, "wrong": str(e)[:MAX_MESSAGE]}


def _borrowed(which: str) -> str:
    name = next(e.function for e in EXERCISES if e.field == which)
    return f"{name} calls mca's own {absent.CALLED[0]}"


def _say(out: BinaryIO, obj: Any) -> None:
    try:
        line = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        line = json.dumps({"id": obj.get("id"), "wrong": "an answer that is not plain data"})
    out.write(line.encode("utf-8", "surrogatepass") + b"\n")
    out.flush()


def serve(inp: BinaryIO, out: BinaryIO) -> int:
    """Load the file the first line carries, then answer every later line."""
    hello = json.loads(inp.readline())
    source, filename = str(hello["source"]), str(hello["filename"])
    lock_down()
    try:
        functions, owners = load(source, filename)
    except BaseException as e:  # the student's module failed at import: that is the answer
        _say(out, {"refused": crash(e, filename)})
        return 3
    _say(out, {"ready": owners})
    for line in inp:
        _say(out, answer(json.loads(line), functions, filename))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Serve on the two descriptors argv names (requests, replies)."""
    requests, replies = (int(x) for x in (sys.argv[1:3] if argv is None else argv[:2]))
    sys.stdout = sys.stderr  # a print is never mistaken for an answer (the grader reads fd 4)
    with os.fdopen(requests, "rb") as inp, os.fdopen(replies, "wb") as out:
        return serve(inp, out)


if __name__ == "__main__":
    sys.exit(main())
