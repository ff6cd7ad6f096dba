"""The options the parts of the command line share, as argparse parent parsers.

The global options (-C, --skills-dir, --strict-skills, --verbose) go before a subcommand or
after it: before it they are the top-level parser's (kept under TOP-prefixed names), after it
the subcommand's, if it takes them (its parser says so by using the parent). `settle` joins the
two and refuses a global a subcommand does not take. Nothing here reads argv by hand.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mca.errors import ConfigError

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "GLOBALS",
    "TOP",
    "Global",
    "Parents",
    "Parser",
    "Run",
    "actions",
    "global_options",
    "parents",
    "settle",
]


class Parser(argparse.ArgumentParser):
    """Every parser of mca's command line: options are spelled out (`--seed` is never taken
    for `--seeds`), and the subcommands' parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


TOP = "top_"  # a global option given before the subcommand
Run = Callable[[argparse.Namespace, Mapping[str, str]], int]  # a subcommand's entry


@dataclass(frozen=True)
class Global:
    """One global option: its flag, where argparse keeps it, and how it is given."""

    flag: str
    dest: str
    options: Mapping[str, Any]


GLOBALS = (
    Global("-C", "workspace", {"metavar": "DIR", "help": "workspace root (default: .)"}),
    Global(
        "--skills-dir",
        "skills_dir",
        {"action": "append", "metavar": "DIR", "help": "extra skills root"},
    ),
    Global(
        "--strict-skills", "strict_skills", {"action": "store_true", "help": "refuse bad skills"}
    ),
    Global("--verbose", "verbose", {"action": "store_true", "help": "show details"}),
)


def global_options(parser: argparse.ArgumentParser, prefix: str = "", only: str = "") -> None:
    """Add the global options (or the one whose dest is `only`) to a parser."""
    for g in GLOBALS:
        if only and g.dest != only:
            continue
        action = g.options.get("action")
        default: list[str] | bool | None = None
        if action in ("append", "store_true"):
            default = [] if action == "append" else False
        parser.add_argument(g.flag, dest=prefix + g.dest, default=default, **g.options)


def _parent(dest: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    global_options(p, only=dest)
    return p


@dataclass(frozen=True)
class Parents:
    """The parent parsers a subcommand builds its parser from."""

    workspace: argparse.ArgumentParser  # -C DIR
    skills_dir: argparse.ArgumentParser  # --skills-dir DIR (repeatable)
    json: argparse.ArgumentParser  # --json


def parents() -> Parents:
    """Fresh parent parsers (argparse copies their actions into each child)."""
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="one JSON object")
    return Parents(_parent("workspace"), _parent("skills_dir"), as_json)


def settle(args: argparse.Namespace, command: str) -> argparse.Namespace:
    """A subcommand's arguments with the global options given before it joined in; a
    ConfigError for one it does not take (it has no parent parser for it)."""
    for g in GLOBALS:
        before = getattr(args, TOP + g.dest)
        if not before:
            continue
        if not hasattr(args, g.dest):
            raise ConfigError(f"mca {command} does not take {g.flag}")
        after = getattr(args, g.dest)
        if isinstance(before, list):
            setattr(args, g.dest, [*before, *(after or [])])
        elif not after:
            setattr(args, g.dest, before)
    return args


def actions(sub: Subparsers, name: str, about: str, run: Run) -> Subparsers:
    """A subcommand whose first word is an action (`mca skills list`): its parser, with `run`,
    and the parsers of its actions to add to (`args.action` says which was given)."""
    p = sub.add_parser(name, help=about, description=about)
    p.set_defaults(run=run)
    return p.add_subparsers(dest="action", required=True)
