"""The cost of starting a sandboxed command: a sandboxed `true` against an unsandboxed one,
alternating, through mca's command path, for each mechanism this user has here.

`make bench` runs it in its own process (root, in CI) at the start of the run, at its end (the
process has grown by then) and beside 10,000 skills loaded in the same process (a session's
memory with many skills); and, as an ordinary account, through tests/confine.py under the
system interpreter: `python -m bench.sandbox_start N` prints one JSON object per mechanism.
Commands start from the spawner (mca/sandbox/spawning/spawner.py), so what mca holds should not
matter: each row says how large this process was (its resident memory) while it measured.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def _alternate(a: Callable[[], float], b: Callable[[], float], n: int) -> tuple[float, float]:
    xs, ys = [], []
    for _ in range(n):
        xs.append(a())
        ys.append(b())
    return statistics.median(xs), statistics.median(ys)


def rss_mb() -> float:
    """This process's resident memory, in MB (0 where /proc does not say)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def measure(n: int, where: Path) -> list[dict[str, object]]:
    """[{mechanism, sandboxed_ms, plain_ms, how, rss_mb}] for namespaces, namespaces without
    Landlock, and Landlock alone (those this system and user have)."""
    from mca.sandbox.box import Sandbox
    from mca.sandbox.probe import probe
    from mca.sandbox.rights import Mode, build_policy
    from mca.tools.command import execute

    full, landlock = probe(), probe(namespaces=False)
    kinds = {
        "namespaces": full if full.user_namespaces else None,
        "namespaces, no Landlock": dataclasses.replace(full, landlock_abi=0)
        if full.user_namespaces
        else None,
        "Landlock only": landlock if landlock.landlock_abi else None,
    }
    out: list[dict[str, object]] = []
    for label, mech in kinds.items():
        if mech is None:
            continue
        with tempfile.TemporaryDirectory(dir=where) as tmp:
            ws, home = Path(tmp) / "ws", Path(tmp) / "home"
            ws.mkdir()
            (ws / ".git").mkdir()
            box = Sandbox(build_policy(Mode.WORKSPACE_WRITE, ws, home, home / ".mca"), mech)

            def timed(sandbox: Sandbox | None, ws: Path = ws) -> Callable[[], float]:
                def run() -> float:
                    start = time.perf_counter()
                    execute("true", str(ws), 10, sandbox=sandbox)
                    return (time.perf_counter() - start) * 1000

                return run

            timed(box)()  # the ruleset is built once per session: not part of a command
            boxed, plain = _alternate(timed(box), timed(None), n)
            box.close()
        row = {"mechanism": label, "sandboxed_ms": boxed, "plain_ms": plain}
        out.append({**row, "how": mech.describe(), "rss_mb": rss_mb()})
    return out


if __name__ == "__main__":
    where = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.gettempdir())
    print(json.dumps(measure(int(sys.argv[1]), where)))
