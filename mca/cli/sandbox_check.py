"""`mca sandbox check [--json] [--lab]`: what the sandbox holds here, for this user, each
property tried in a real sandboxed child (mca/sandbox/check.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mca.cli.parents import actions
from mca.ui.width import fitted

if TYPE_CHECKING:
    from mca.cli.parents import Parents, Subparsers

__all__ = ["add_parser", "run"]
EXIT_HELD, EXIT_NOT_HELD = 0, 1


def add_parser(parent: Subparsers, parents: Parents) -> None:
    """`sandbox check [--json] [--lab]` (-C: the workspace it is tried in)."""
    check = actions(parent, "sandbox", "the sandbox on this system", run).add_parser(
        "check",
        parents=[parents.workspace, parents.json],
        help="try each property in a real sandboxed child; exit 0 when every one holds",
    )
    check.add_argument(
        "--lab",
        action="store_true",
        help="exit 0 when what grading student code needs holds (what `mca lab grade` asks)",
    )


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """Entry for `mca sandbox ...`; returns the exit code."""
    from mca.assembly.sandboxing import sandbox_for
    from mca.config.settings import load_settings
    from mca.sandbox.check import check, check_system, lines, refusal
    from mca.sandbox.properties import LAB_NEEDS, Prop
    from mca.sandbox.rights import Mode

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
        sys.stdout.write(
            fitted(f"the sandbox for {who} here: {box.mechanisms.describe()}\n", sys.stdout)
        )
        sys.stdout.write(fitted("\n".join(lines(findings)) + "\n", sys.stdout))
        if missing and args.lab:
            sys.stdout.write(fitted(f"not enough to grade student code: {missing}\n", sys.stdout))
    return EXIT_NOT_HELD if missing else EXIT_HELD
