"""`MOCK=1 SELFTEST=1 mca` / `mca selftest`: the lab's 14 checks, offline, deterministic.

Production and the starter run here; a student's exercises.py (`--lab FILE`, or MCA_LAB=FILE)
is answered by a child process (mca/lab/handin.py): the checks and verdicts stay here, with a
time limit per check and for the whole run.
Output is identical on every machine: no temp paths, no timings. Exit 0 only when all pass.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mca.cli.content import lab_content

if TYPE_CHECKING:
    from mca.cli.parents import Parents, Subparsers
    from mca.lab.suite import Check

__all__ = ["add_parser", "parser", "run", "run_lab"]
ABOUT = "the lab's 14 offline checks"


def _options() -> argparse.ArgumentParser:
    """The self-test's own options (a parent of both its parsers)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--json", action="store_true", help="one JSON object (schema mca-selftest/1)")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML for autograders")
    p.add_argument("--lab", metavar="FILE", help="a student's exercises.py (run in a child)")
    p.add_argument(
        "--seed", type=int, action="append", metavar="N", help="fixture variant (repeatable)"
    )
    p.add_argument(
        "--check-seconds",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="time limit per check (with --lab; default: %(default)s)",
    )
    return p


def add_parser(sub: Subparsers, parents: Parents) -> None:
    """`selftest`: no workspace, no skills directory (it runs the lab's own content)."""
    p = sub.add_parser("selftest", parents=[_options()], help=ABOUT, description=ABOUT)
    p.set_defaults(run=run)


def parser() -> argparse.ArgumentParser:
    """The self-test's parser on its own (`SELFTEST=1 mca`, where argv is the REPL's)."""
    from mca.cli.parents import Parser

    return Parser(prog="mca selftest", parents=[_options()], description=ABOUT)


def run_lab(
    repo: Path,
    lab: str,
    seeds: Sequence[int],
    check_seconds: float = 30.0,
    checks: Sequence[Check] | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[list[dict[str, object]], str]:
    """(per-check results over the seeds, runtime name) for a lab spec. `checks` replaces the
    lab's table. A student's file is answered by a child process; mca's own policies run here."""
    from mca.lab.results import combine
    from mca.lab.suite import CHECKS

    table = CHECKS if checks is None else checks
    if lab.endswith(".py"):
        from mca.errors import McaError
        from mca.lab.handin import run_file
        from mca.lab.outputs import Status

        run = run_file(repo, Path(lab), seeds, check_seconds, table, env or {})
        if run.status is Status.REFUSED:
            raise McaError(f"{lab}: {run.message}")
        note = f"not run: {run.status}: {run.message}" if run.status is not Status.OK else ""
        return combine(run.checks, seeds, note, table), run.runtime or lab
    from mca.lab.policies import select_policy
    from mca.lab.suite import run_suite

    policy = select_policy(lab)
    return combine(list(run_suite(repo, policy, seeds, table)), seeds, checks=table), policy.name


def run(
    args: argparse.Namespace, env: Mapping[str, str], checks: Sequence[Check] | None = None
) -> int:
    """Entry: exit 0 only when no check failed (one skipped for lack of Node.js does not)."""
    from mca.cli.ledger_compare import compare_text, lab_report
    from mca.lab.results import to_json, to_junit, to_text

    lab = args.lab or env.get("MCA_LAB", "")
    seeds = args.seed or [0]
    if not 0 < args.check_seconds <= 3600:
        from mca.errors import ConfigError

        raise ConfigError("--check-seconds: must be a number of seconds from 0 to 3600")
    with lab_content() as repo:  # a private copy: never the current directory's skills/
        results, runtime = run_lab(repo, lab, seeds, args.check_seconds, checks, env)
        report = lab_report(repo)
    if args.junit:
        from mca.fs.careful import atomic_write, resolved

        junit = Path(args.junit).absolute()  # replaced atomically: a planted link is not followed
        atomic_write(junit, to_junit(results, runtime).encode(), 0o644, root=resolved(junit.parent))
    if args.json:
        sys.stdout.write(json.dumps(to_json(results, runtime, seeds, report), indent=2) + "\n")
    else:
        sys.stdout.write(to_text(results, runtime, compare_text(report), seeds) + "\n")
    return 0 if all(c["passed"] or c.get("skipped") for c in results) else 1
