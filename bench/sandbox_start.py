"""The cost of starting a sandboxed command: a sandboxed `true` against an unsandboxed one,
alternating, through mca's command path, for each mechanism this user has here.

`make bench` runs it in its own process (root, in CI) and, as an ordinary account, through
tests/confine.py under the system interpreter: `python -m bench.sandbox_start N` prints one
JSON object per mechanism.
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


def measure(n: int, where: Path) -> list[dict[str, object]]:
    """[{mechanism, sandboxed_ms, plain_ms, describe}] for namespaces, namespaces without
    Landlock, and Landlock alone (those this system and user have)."""
    from mca.sandbox.box import Sandbox
    from mca.sandbox.policy import Mode, build_policy
    from mca.sandbox.probe import probe
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
        out.append(
            {"mechanism": label, "sandboxed_ms": boxed, "plain_ms": plain, "how": mech.describe()}
        )
    return out


if __name__ == "__main__":
    where = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.gettempdir())
    print(json.dumps(measure(int(sys.argv[1]), where)))
