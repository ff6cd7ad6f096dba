"""`make bench` checkpoints: what workspace checkpoints add to a turn on a 5,000-file workspace,
against the same turn with checkpoints off (MCA_CHECKPOINT_CAP=0), alternating in one run.

The turn is a scripted model's edit of one file and one command (`true`), answered at once:
everything but a real model's latency, so the ratio is the worst a person could see. "First":
a session whose store is empty (every file read, hashed and stored); "incremental": later turns
of one session (the session's first walk, then what inotify names)."""

from __future__ import annotations

import statistics
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
    from mca.assemble import open_session
    from mca.config import load_settings
    from mca.session import HeadlessUI

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
