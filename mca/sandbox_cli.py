"""`mca sandbox check [--json] [--lab]`: what the sandbox holds here, for this user, each
property tried in a real sandboxed child (mca/sandbox/check.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

EXIT_HELD, EXIT_NOT_HELD = 0, 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mca sandbox", description="the sandbox on this system")
    sub = p.add_subparsers(dest="action", required=True)
    check = sub.add_parser(
        "check",
        help="try each property in a real sandboxed child; exit 0 when every one holds",
    )
    check.add_argument("--json", action="store_true", help="one JSON object")
    check.add_argument(
        "--lab",
        action="store_true",
        help="exit 0 when what grading student code needs holds (what `mca lab grade` asks)",
    )
    check.add_argument("-C", dest="workspace", metavar="DIR", help=argparse.SUPPRESS)
    return p


def run_sandbox_command(argv: Sequence[str], env: Mapping[str, str]) -> int:
    """Entry for `mca sandbox ...`; returns the exit code."""
    from mca.config import load_settings
    from mca.sandbox.check import check, check_system, lines, refusal
    from mca.sandbox.policy import Mode
    from mca.sandbox.properties import LAB_NEEDS, Prop
    from mca.sandbox.settings import sandbox_for

    args = _parser().parse_args(argv)
    workspace = Path(args.workspace or os.getcwd())
    settings = load_settings(env, workspace=workspace, overrides={"sandbox": "workspace-write"})
    box = sandbox_for(settings)
    if args.lab:  # as the lab runs student code: read-only
        findings = check_system(box.mechanisms, settings.user_home, settings.home, Mode.READ_ONLY)
    else:
        findings = check(box)
    needs = LAB_NEEDS if args.lab else tuple(Prop)
    missing = refusal(findings, needs)
    who = "root" if os.geteuid() == 0 else f"uid {os.getuid()}"
    if args.json:
        report = {
            "user": who,
            "mechanisms": box.mechanisms.describe(),
            "properties": [f.as_dict() for f in findings],
            "held": not missing,
        }
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(f"the sandbox for {who} here: {box.mechanisms.describe()}\n")
        sys.stdout.write("\n".join(lines(findings)) + "\n")
        if missing and args.lab:
            sys.stdout.write(f"not enough to grade student code: {missing}\n")
    return EXIT_NOT_HELD if missing else EXIT_HELD
