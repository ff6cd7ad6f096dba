"""`python -m mca.lab.runner`: the lab's checks in a process of their own, one JSON line each.

The self-test (`mca selftest --lab FILE`) and the grader (`mca lab grade`) start this for
student code: a check that raises fails with the message, one that loops is stopped by its
time limit, and a process that dies or hangs as a whole costs only this child. A student
function may not start processes or open connections (an audit hook refuses it). This is
isolation against accidents, not a security sandbox.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mca.lab.suite import Check

CHECK_SECONDS = 30.0
BLOCKED_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "socket.connect",
    "socket.bind",
    "socket.getaddrinfo",
)


def guard(student: Path) -> None:
    """Refuse processes, sockets and forbidden imports while student code is on the stack."""
    from mca.lab.student import FORBIDDEN

    target = str(student.resolve())

    def student_on_stack() -> bool:
        frame: FrameType | None = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == target:
                return True
            frame = frame.f_back
        return False

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith(BLOCKED_EVENTS) and student_on_stack():
            raise RuntimeError(f"exercises.py may not start processes or use the network ({event})")
        if event == "import" and str(args[0]).split(".")[0] in FORBIDDEN and student_on_stack():
            raise RuntimeError(f"exercises.py may not import {args[0]}")

    sys.addaudithook(hook)


def run(
    repo: Path,
    lab_spec: str,
    seeds: Sequence[int],
    seconds: float,
    say: Callable[[dict[str, Any]], None],
    checks: Sequence[Check] | None = None,
) -> int:
    """Load the policy (with a time limit), then every check of the table, each reported
    through `say` as it finishes."""
    from mca.errors import McaError
    from mca.lab.policies import select_policy
    from mca.lab.suite import CHECKS, CheckTimeout, run_suite, time_limit

    try:
        with time_limit(seconds):  # importing the file has a time limit too
            policy = select_policy(lab_spec)
    except McaError as e:
        say({"event": "refused", "message": str(e)})
        return 3
    except CheckTimeout:
        say({"event": "refused", "message": f"importing {lab_spec} took over {seconds:g} s"})
        return 3
    say({"event": "runtime", "name": policy.name})
    for result in run_suite(repo, policy, seeds, CHECKS if checks is None else checks, seconds):
        say({"event": "check", **result})
    say({"event": "done"})
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mca.lab.runner")
    p.add_argument("--repo", required=True)
    p.add_argument("--lab", default="")
    p.add_argument("--seeds", default="0")
    p.add_argument("--check-seconds", type=float, default=CHECK_SECONDS)
    p.add_argument("--report-fd", type=int, default=1, help="where the JSON lines go")
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    out = os.fdopen(args.report_fd, "w", encoding="utf-8")
    sys.stdout = sys.stderr  # whatever student code prints cannot pass for a report line

    def say(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    if args.lab.endswith(".py"):
        guard(Path(args.lab))
    return run(Path(args.repo), args.lab, seeds, args.check_seconds, say)


if __name__ == "__main__":
    sys.exit(main())
