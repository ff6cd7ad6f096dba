"""`mca sandbox check`: each property tried in a real sandboxed child, on this system, as this
user, through the same path the model's commands take.

A throwaway world is made in a private temporary directory: a workspace with a `.git/` and a
repository inside it, a folder beside it, a planted secret file and folder (added to the secret
list), a TCP and a UDP listener on 127.0.0.1, and listening unix sockets outside the workspace
(in a folder added to the places sockets live, one that $SSH_AUTH_SOCK names, and in /run or
your $XDG_RUNTIME_DIR where you may make one; and an abstract one). One command per property
tries to get out (mca/sandbox/trials.py); the verdict is read from the world afterwards, never
from what the command printed about itself.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mca.sandbox.box import Sandbox
from mca.sandbox.probe import Mechanisms
from mca.sandbox.properties import Expected, Prop, expected
from mca.sandbox.rights import Grant, Mode, Policy, build_policy
from mca.sandbox.trials import CHECK_PROCESSES, TRIALS, Run, World, make_world, trial_policy

__all__ = [
    "CHECK_PROCESSES",
    "TRIALS",
    "Finding",
    "Run",
    "check",
    "check_system",
    "lines",
    "refusal",
]


@dataclass(frozen=True)
class Finding:
    """One property, tried: held or not, what holds it, and what the trial saw."""

    prop: Prop
    held: bool
    by: str
    saw: str

    def as_dict(self) -> dict[str, object]:
        return {"property": str(self.prop), "held": self.held, "by": self.by, "saw": self.saw}


def lines(findings: list[Finding]) -> list[str]:
    """One line per property: held or not, what holds it, what the trial saw."""
    width = max(len(str(f.prop)) for f in findings)
    return [
        f"  {'held    ' if f.held else 'NOT HELD'}  {f.prop!s:<{width}}  {f.by}"
        + (f" ({f.saw})" if not f.held else "")
        for f in findings
    ]


def refusal(findings: list[Finding], needs: tuple[Prop, ...]) -> str:
    """Why these findings cannot do for what `needs` ('' when they can)."""
    missing = [f for f in findings if f.prop in needs and not f.held]
    return "; ".join(f"{f.prop}: {f.saw}" for f in missing)


def check_system(
    mechanisms: Mechanisms, user_home: Path, mca_home: Path, mode: Mode = Mode.WORKSPACE_WRITE
) -> list[Finding]:
    """The check for these mechanisms, in this mode, with this user's secret list."""
    policy = build_policy(mode, Path(tempfile.gettempdir()), user_home, mca_home)
    return check(Sandbox(policy, mechanisms))


def check(box: Sandbox, make: Callable[[Policy, Mechanisms], Sandbox] = Sandbox) -> list[Finding]:
    """Try every property with this sandbox's mechanisms and policy (its workspace aside: the
    trial has its own, built by `make`). Where nothing can contain a command, nothing is
    tried."""
    read_only = not box.policy.writes_workspace and box.policy.mode is not Mode.OFF
    means = {
        e.prop: e for e in expected(box.mechanisms, root=os.geteuid() == 0, read_only=read_only)
    }
    if not box.mechanisms.available:
        return [Finding(p, False, means[p].by, "not tried") for p in Prop]
    w = make_world()
    trial = make(trial_policy(box.policy, w), box.mechanisms)
    w.tmp = trial.tmp()
    try:
        return [_one(trial, w, prop, means[prop]) for prop in Prop]
    finally:
        trial.close()
        w.close()
        shutil.rmtree(w.root, ignore_errors=True)


def _one(trial: Sandbox, w: World, prop: Prop, means: Expected) -> Finding:
    def run(command: str, stop_at: str = "") -> str:
        return _run(trial, w.ws, command, w.env, stop_at)

    held, saw = TRIALS[prop](w, run)
    return Finding(prop, held, means.by, saw)


def _run(box: Sandbox, ws: Path, command: str, more: dict[str, str], stop_at: str = "") -> str:
    """One command the way run_command runs it: prepared, started, waited for (or, with
    `stop_at`, stopped as Esc stops it once it printed that), cleaned up after (leftovers
    stopped, protected paths put back)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(ws), "LC_ALL": "C"}
    env.update(more)
    launch = box.prepare(Grant(), env, command=command)
    proc = box.popen(
        ["/bin/bash", "-c", command],
        launch,
        cwd=str(ws),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    out = b""
    if stop_at:
        assert proc.stdout is not None
        while stop_at.encode() not in out and (chunk := os.read(proc.stdout.fileno(), 4096)):
            out += chunk
        _kill(proc.pid)
    try:
        rest, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        _kill(proc.pid)
        rest, _ = proc.communicate()
    box.finish(launch, proc.pid)
    return (out + (rest or b"")).decode(errors="replace")


def _kill(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
