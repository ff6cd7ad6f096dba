"""`MOCK=1 SELFTEST=1 mca` / `mca selftest`: the lab's 14 checks, offline, deterministic.

Production and the starter run here; a student's exercises.py (`--lab FILE`, or MCA_LAB=FILE)
runs in a child process (mca/lab/runner.py) with a time limit per check and for the whole run.
Output is identical on every machine: no temp paths, no timings. Exit 0 only on 14/14.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def find_repo(start: Path) -> Path:
    """The directory holding the lab's skills/ and fixtures/ (the source checkout)."""
    here = Path(__file__).resolve().parent.parent
    for d in (here, start, *start.parents):
        if (d / "skills" / "calc-conventions").is_dir() and (d / "fixtures" / "workspace").is_dir():
            return d
    raise FileNotFoundError("cannot find the lab's skills/ and fixtures/ (run from the checkout)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mca selftest", description="the lab's 14 offline checks")
    p.add_argument("--json", action="store_true", help="one JSON object (schema mca-selftest/1)")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML for autograders")
    p.add_argument("--lab", metavar="FILE", help="a student's exercises.py (run in a child)")
    p.add_argument(
        "--seed", type=int, action="append", metavar="N", help="fixture variant (repeatable)"
    )
    p.add_argument(
        "--check-seconds", type=float, default=30.0, help="time limit per check (with --lab)"
    )
    return p


def run_lab(
    repo: Path, lab: str, seeds: Sequence[int], check_seconds: float = 30.0
) -> tuple[list[dict[str, object]], str]:
    """(per-check results over the seeds, runtime name) for a lab spec."""
    from mca.lab.report import combine

    if lab.endswith(".py"):
        from mca.lab.child import run_child

        timeout = check_seconds * 15 * len(seeds) + 30
        child = run_child(
            repo, str(Path(lab).resolve()), seeds, timeout=timeout, check_seconds=check_seconds
        )
        if child.status == "refused":
            from mca.errors import McaError

            raise McaError(child.message)
        note = f"not run: {child.message}" if child.status != "ok" else ""
        return combine(child.checks, seeds, note), child.runtime or lab
    import tempfile

    from mca.lab.checks import Lab, run_check
    from mca.lab.variant import materialize, names_for
    from mca.skills.select import select_policy

    policy = select_policy(lab)
    results = []
    for seed in seeds:
        names = names_for(seed)
        with tempfile.TemporaryDirectory() as tmp:
            variant = Lab(materialize(repo, names, Path(tmp)), policy, names, shipped=repo)
            results += [{"seed": seed, **run_check(variant, n)} for n in range(1, 15)]
    return combine(results, seeds), policy.name


def run_selftest_command(argv: Sequence[str], env: Mapping[str, str]) -> int:
    """Entry: exit 0 only on 14/14."""
    from mca.errors import McaError
    from mca.lab.report import to_json, to_junit, to_text
    from mca.ledger_cli import compare_text, lab_report

    args, _ = _parser().parse_known_args(argv)
    lab = args.lab or env.get("MCA_LAB", "")
    seeds = args.seed or [0]
    try:
        repo = find_repo(Path.cwd())
    except FileNotFoundError as e:
        raise McaError(str(e)) from None
    if not 0 < args.check_seconds <= 3600:
        from mca.errors import ConfigError

        raise ConfigError("--check-seconds: must be a number of seconds from 0 to 3600")
    checks, runtime = run_lab(repo, lab, seeds, args.check_seconds)
    report = lab_report(repo)
    if args.junit:
        Path(args.junit).write_text(to_junit(checks, runtime), encoding="utf-8")
    if args.json:
        sys.stdout.write(json.dumps(to_json(checks, runtime, seeds, report), indent=2) + "\n")
    else:
        sys.stdout.write(to_text(checks, runtime, compare_text(report)) + "\n")
    return 0 if all(c["passed"] for c in checks) else 1
