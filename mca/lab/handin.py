"""One hand-in, checked: the self-test's `--lab FILE` and every row of `mca lab grade`.

The checks, their expected values and the verdicts stay in this process; the student's file is
only ever run in the child a Launcher starts (mca/lab/remote.py). Each exercise's checks call
that exercise's function alone; runtime checks (no exercise) call none of the student's. A
check that timed out or killed the child on one seed is not run again on the next ones: it has
failed already, and a loop costs its time once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mca.lab.launch import Isolation, Limits
from mca.lab.outputs import Status
from mca.lab.ownership import bindings
from mca.lab.remote import Refused, Student
from mca.lab.student import forbidden_imports, parse
from mca.lab.suite import CHECKS, Check, labs, run_check
from mca.lab.variant import Variants
from mca.skills.policy import PRODUCTION

__all__ = ["HandinRun", "own_machine", "refusal", "run_file", "run_handin"]


@dataclass
class HandinRun:
    """What one hand-in got: per-seed results, and how it went as a whole."""

    runtime: str = ""
    checks: list[dict[str, Any]] = field(default_factory=list)
    status: Status = Status.OK  # or REFUSED, CRASHED, TIMED_OUT, INTERRUPTED
    message: str = ""
    seconds: float = 0.0
    killed_by_system: bool = False  # a child was killed by neither mca nor its limits (OOM)


def refusal(source: str) -> str:
    """Why the file is refused before anything runs ('' when it is not)."""
    try:
        tree = parse(source)
    except SyntaxError as e:
        return f"line {e.lineno}: {e.msg}"
    except ValueError as e:  # a NUL byte in the source
        return f"not Python source ({e})"
    bad = forbidden_imports(source, tree)
    return f"imports {', '.join(bad)}" if bad else ""


def run_handin(
    variants: Variants,
    source: str,
    filename: str,
    seeds: Sequence[int],
    isolation: Isolation,
    limits: Limits,
    checks: Sequence[Check] = CHECKS,
    cancel: threading.Event | None = None,
) -> HandinRun:
    """Every check of `checks` on every seed, the student's functions answered by a child
    (`cancel` set: the run was interrupted, the rest is not run)."""
    start = time.monotonic()
    run = HandinRun()
    why = refusal(source)
    if why:
        run.status, run.message = Status.REFUSED, why
        return run
    launcher = isolation.launcher(limits)
    static = bindings(parse(source))
    student = Student(source, filename, launcher, limits, static, cancel)
    try:
        student.start()
        run.runtime = student.runtime
        run.checks = student.overrule(_checks(student, variants, seeds, checks))
    except Refused as e:
        run.status, run.message = e.kind, str(e)
    finally:
        student.close()
        run.seconds = time.monotonic() - start
        run.killed_by_system = student.killed_by_system
    return run


def _checks(
    student: Student, variants: Variants, seeds: Sequence[int], checks: Sequence[Check]
) -> list[dict[str, Any]]:
    results = []
    for lab in labs(variants, seeds, PRODUCTION):
        for check in checks:
            if lab.names.seed != seeds[0] and (check.shipped_only or check.id in student.hard):
                continue
            if check.exercise is None:
                one = lab
            else:
                student.begin(check.id)
                one = replace(lab, policy=student.policy_for(check.exercise))
            results.append({"seed": lab.names.seed, **run_check(one, check)})
    return results


def run_file(
    repo: Path,
    path: Path,
    seeds: Sequence[int],
    check_seconds: float,
    checks: Sequence[Check],
    env: Mapping[str, str],
) -> HandinRun:
    """`mca selftest --lab FILE`: the student's own file, on the student's machine."""
    from mca.errors import McaError

    try:
        source = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise McaError(f"{path}: cannot read it ({e})") from None
    limits = Limits(seconds=check_seconds * 15 * len(seeds) + 30, check_seconds=check_seconds)
    with Variants(repo) as variants:
        isolation = replace(own_machine(variants.root, env), reads=(repo,))
        return run_handin(variants, source, str(path), seeds, isolation, limits, checks)


def own_machine(workspace: Path, env: Mapping[str, str]) -> Isolation:
    """A student's own self-test: the sandbox where this machine has one, limits otherwise
    (it is the student's own code, on the student's own machine)."""
    from mca.sandbox.probe import probe
    from mca.state.crash import home_of

    mech = probe()
    home = Path(env.get("HOME") or Path.home())
    return Isolation(mech if mech.available else None, workspace, home_of(env), home)
