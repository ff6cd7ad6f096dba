"""`make bench` checkpoints: what workspace checkpoints add to a turn on a 5,000-file workspace,
against the same turn with checkpoints off (MCA_CHECKPOINT_CAP=0), alternating in one run.

The turn is a scripted model's edit of one file and one command (`true`), answered at once:
everything but a real model's latency, so the ratio is the worst a person could see. "First":
a session whose store is empty (every file read, hashed and stored); "incremental": later turns
of one session (the session's first walk, then what inotify names).

And a hostile tree (issue 33): a command that makes a 3,000-deep chain of directories and
60,000 empty files. The checkpoint walk of it, against merely listing it (os.scandir), and the
turn plus /undo, against the same turn without checkpoints plus `rm -rf`, alternating."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FILES = 5_000
PER_DIR = 50


def workspace(root: Path) -> Path:
    """5,000 small source files in 100 directories, and a .gitignore."""
    ws = root / "ws"
    for d in range(FILES // PER_DIR):
        sub = ws / f"pkg{d // 10}" / f"mod{d}"
        sub.mkdir(parents=True)
        for f in range(PER_DIR):
            (sub / f"f{f}.py").write_text(f"def f{f}():\n    return {d * f}\n" * 8)
    (ws / ".gitignore").write_text("__pycache__/\n*.pyc\nbuild/\n")
    return ws


class Looping:
    """A model that edits a file, runs `true`, answers; again each turn."""

    name = "bench"

    def __init__(self) -> None:
        self.step = 0

    def complete(self, request: Any, on_text: Any = None, on_thinking: Any = None) -> Any:
        from mca.types import Message, Response, ToolCall

        self.step += 1
        phase = self.step % 3
        if phase == 1:
            args = {"path": "pkg0/mod0/f0.py", "content": f"X = {self.step}\n"}
            return Response(
                Message("assistant", "", tool_calls=(ToolCall("w", "write_file", args),))
            )
        if phase == 2:
            call = ToolCall("r", "run_command", {"command": "true"})
            return Response(Message("assistant", "", tool_calls=(call,)))
        return Response(Message("assistant", "done"))

    def close(self) -> None:
        return None


def _session(ws: Path, home: Path, cap: str) -> Any:
    from mca.assembly.assemble import open_session
    from mca.config.settings import load_settings
    from mca.session.faces import HeadlessUI

    env = {"MOCK": "1", "MCA_HOME": str(home), "MCA_SANDBOX": "off", "MCA_CHECKPOINT_CAP": cap}
    settings = load_settings(env, workspace=ws)
    return open_session(settings, HeadlessUI(), model=Looping(), log_to_disk=False)


def _turn(session: Any) -> float:
    start = time.perf_counter()
    session.run_turn("edit and run")
    return (time.perf_counter() - start) * 1000


def measure(n: int) -> dict[str, float]:
    """Medians (ms) of a turn with checkpoints (first: an empty store; then incremental) and
    without, alternating."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(Path(tmp))
        firsts, ons, offs = [], [], []
        for i in range(max(3, n // 5)):  # a new store each time: nothing to reuse
            fresh = _session(ws, Path(tmp) / f"fresh{i}", "536870912")
            firsts.append(_turn(fresh))
            fresh.close()
        on = _session(ws, Path(tmp) / "on", "536870912")
        off = _session(ws, Path(tmp) / "off", "0")
        _turn(on), _turn(off)  # warm
        for _ in range(n):
            ons.append(_turn(on))
            offs.append(_turn(off))
        on.close(), off.close()
    return {
        "first": statistics.median(firsts),
        "incremental": statistics.median(ons),
        "off": statistics.median(offs),
    }


def bench_checkpoints(results: list[Any], quick: bool) -> dict[str, float]:
    """Rows for the report: the first checkpoint (an empty store) and the incremental one."""
    from bench.run import Result

    n = 5 if quick else 15
    m = measure(n)
    first, inc, off = m["first"], m["incremental"], m["off"]
    note = f"a turn (one write_file, one `true`) with checkpoints off: {off:.1f} ms"
    results.append(
        Result(
            f"turn + first checkpoint ({FILES:,} files)",
            first,
            "ms",
            off,
            "the same turn, checkpoints off",
            first / off,
            "info",
            None,
            "every file read, hashed and stored once; " + note,
        )
    )
    added = inc - off
    results.append(
        Result(
            f"turn + incremental checkpoint ({FILES:,} f.)",
            inc,
            "ms",
            off,
            "the same turn, checkpoints off",
            inc / off,
            "<= 1.2x",
            inc / off <= 1.2,
            f"{added:+.1f} ms per turn (medians of {n}, alternating): before the first change and"
            " after the turn, the paths inotify names are looked at again; the model answers"
            " at once here, so this is the largest share a checkpoint can take of a turn",
        )
    )
    return m


# -- a hostile tree: a 3,000-deep directory chain and 60,000 empty files (issue 33) --------------
DEEP, DEEP_FILES = 3_000, 60_000


def deep_command(depth: int = DEEP, files: int = DEEP_FILES) -> str:
    """A command that makes a `depth`-deep chain with `files` empty files along it, each level
    made from the one above (the whole path is longer than PATH_MAX)."""
    per = max(1, files // depth)
    return (
        'python3 -c "import os\n'
        f"for i in range({depth}):\n"
        "    os.mkdir('d'); os.chdir('d')\n"
        f"    for j in range({per}): open('f%d' % j, 'w').close()\n"
        '"'
    )


def _bare_walk(top: str) -> int:
    """Every entry of the tree, listed with os.scandir through directory handles (a path would
    be too long) and nothing else: what merely listing the tree costs."""
    n, stack = 0, [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    while stack:
        fd = stack.pop()
        with os.scandir(fd) as it:
            for e in it:
                n += 1
                if e.is_dir(follow_symlinks=False):
                    stack.append(os.open(e.name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd))
        os.close(fd)
    return n


class OneCommand:
    """A model that runs one command, then answers."""

    name = "bench"

    def __init__(self, command: str) -> None:
        self.command, self.step = command, 0

    def complete(self, request: Any, on_text: Any = None, on_thinking: Any = None) -> Any:
        from mca.types import Message, Response, ToolCall

        self.step += 1
        if self.step == 1:
            call = ToolCall("r", "run_command", {"command": self.command, "timeout": 600})
            return Response(Message("assistant", "", tool_calls=(call,)))
        return Response(Message("assistant", "done"))

    def close(self) -> None:
        return None


def _remove(ws: Path) -> None:
    subprocess.run(["rm", "-rf", str(ws / "d")], check=True)  # rmtree recurses: too deep


def _deep_turn(root: Path, checkpoints: bool, command: str) -> tuple[float, str]:
    """Seconds for the turn that makes the tree and its /undo (checkpoints on), or the turn and
    an `rm -rf` (off); and what /undo said it did not cover."""
    from mca.assembly.assemble import open_session
    from mca.config.settings import load_settings
    from mca.session.faces import HeadlessUI

    ws = root / "ws"
    ws.mkdir(parents=True)
    cap = "536870912" if checkpoints else "0"
    env = {"MOCK": "1", "MCA_HOME": str(root / "home"), "MCA_SANDBOX": "off"}
    settings = load_settings({**env, "MCA_CHECKPOINT_CAP": cap}, workspace=ws)
    session = open_session(settings, HeadlessUI(), model=OneCommand(command), log_to_disk=False)
    start = time.perf_counter()
    session.run_turn("make the tree")
    said = ""
    if checkpoints:
        report = session.undo()
        said = next((n for n in report.notes if "levels" in n), "")
    else:
        _remove(ws)
    took = time.perf_counter() - start
    session.close()
    if checkpoints:
        _remove(ws)  # what /undo left (said), untimed
    shutil.rmtree(root)
    return took, said


def bench_deep(results: list[Any], quick: bool) -> dict[str, float]:
    """Rows for the report: the checkpoint walk of the tree against merely listing it, and the
    turn that makes it plus /undo against the same turn without checkpoints plus `rm -rf`."""
    from bench.run import Result
    from mca.fs.careful import sha256
    from mca.workspace.walk import Caps, Scanner

    depth, files = (1_000, 20_000) if quick else (DEEP, DEEP_FILES)
    command = deep_command(depth, files)
    label = f"{depth:,}-deep tree, {files:,} files"
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        subprocess.run(["bash", "-c", command], cwd=ws, check=True)
        scanner = Scanner(ws, sha256, Caps(file=8 << 20, total=512 << 20))
        tree = scanner.scan()

        def walk() -> float:
            start = time.perf_counter()
            scanner.scan()
            return (time.perf_counter() - start) * 1000

        def bare() -> float:
            start = time.perf_counter()
            _bare_walk(str(ws))
            return (time.perf_counter() - start) * 1000

        walks, bares = [], []
        for _ in range(3 if quick else 7):
            walks.append(walk())
            bares.append(bare())
        _remove(ws)
    w, b = statistics.median(walks), statistics.median(bares)
    cut = ", ".join(f"{why}" for why in sorted(set(tree.uncovered.values())))
    results.append(
        Result(
            f"checkpoint walk, {label}",
            w,
            "ms",
            b,
            "os.scandir of the whole tree",
            w / b,
            "<= 1x",
            w / b <= 1,
            f"{len(tree.entries):,} entries recorded; not walked: {cut or 'nothing'} (said in"
            " /undo's report and the command's result)",
        )
    )
    ons, offs, said = [], [], ""
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(1 if quick else 3):  # each round makes the tree again
            took, said = _deep_turn(Path(tmp) / f"on{i}", True, command)
            ons.append(took)
            offs.append(_deep_turn(Path(tmp) / f"off{i}", False, command)[0])
    on, off = statistics.median(ons), statistics.median(offs)
    results.append(
        Result(
            f"turn + /undo, {label}",
            on,
            "s",
            off,
            "the same turn, checkpoints off, + rm -rf",
            on / off,
            "<= 1.5x",
            on / off <= 1.5,
            f"the turn's command makes the tree; /undo removes what the walk covered and says:"
            f" {said or '(nothing left out)'}",
        )
    )
    return {"walk_ms": w, "bare_walk_ms": b, "turn_undo_s": on, "turn_rm_s": off}
