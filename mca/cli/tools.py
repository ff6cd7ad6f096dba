"""`mca tools [--json]`: the tool registry (the same eight tools in any workspace)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mca.cli.parents import Parents, Subparsers

__all__ = ["add_parser", "run"]


def add_parser(sub: Subparsers, parents: Parents) -> None:
    """`tools`: -C is taken (the registry is the same in every workspace)."""
    p = sub.add_parser(
        "tools",
        parents=[parents.workspace, parents.json],
        help="print the tool registry",
        description="print the tool registry",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """Print the registry, for people or (--json) for programs."""
    from mca.tools import REGISTRY
    from mca.ui.render import tools_json, tools_text

    tools = list(REGISTRY.values())
    sys.stdout.write((tools_json(tools) if args.json else tools_text(tools)) + "\n")
    return 0
