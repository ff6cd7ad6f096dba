"""argv -> what to run: a subcommand (each one an argparse parser built from the shared parents,
with its `run(args, env)`), or the REPL and -p (the session's flags and a first message).

`mca [globals] COMMAND ...` runs a subcommand when the first word is one; anything else is the
REPL's: `mca "fix the failing test"`, `mca -p ...`, and `mca -- tools` (after `--` a word is a
message, never a command). The session's flags before a command word make it a message too, as
they always have: `mca --yes tools` starts the REPL with "tools".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from mca import __version__
from mca.cli import ledger_compare, sandbox_check, selftest, skills, tools
from mca.cli.parents import TOP, Parser, global_options, parents, settle
from mca.lab import cli as lab_cli
from mca.modes import DEFAULT_MODE, MODES
from mca.sandbox.rights import Mode
from mca.turn import DEFAULT_MAX_STEPS

__all__ = ["OUTPUT_FORMATS", "SUBCOMMANDS", "command_parser", "parse_command", "repl_parser"]

OUTPUT_FORMATS = ("text", "json", "stream-json")  # what -p prints (--output-format)
SUBCOMMANDS = (tools, skills, ledger_compare, selftest, lab_cli, sandbox_check)
SESSION = "session_"  # the session's flags as the command parser keeps them (to tell them apart)


def _adder(p: argparse.ArgumentParser, prefix: str) -> Callable[..., None]:
    """add_argument, or (with `prefix`) the same flag kept apart with its default suppressed:
    the parser that looks for a subcommand only needs to know the flag was given."""

    def add(*flags: str, **kw: Any) -> None:
        if prefix:
            dest = kw.get("dest") or flags[-1].lstrip("-").replace("-", "_")
            kw |= {"default": argparse.SUPPRESS, "dest": prefix + dest}
        p.add_argument(*flags, **kw)

    return add


def _session_flags(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """The flags of the REPL and -p."""
    add = _adder(p, prefix)
    add(
        "-p",
        "--prompt",
        metavar="SENTENCE",
        nargs="?",
        const="-",
        help="run one turn and print the answer ('-' or nothing: read it from stdin)",
    )
    add(
        "-c",
        "--continue",
        dest="resume_last",
        action="store_true",
        help="go on with the last conversation in this workspace",
    )
    add(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="pick a saved conversation to go on with (or open the one with this id); it keeps"
        " its id",
    )
    add(
        "--fork",
        action="store_true",
        help="with --continue or --resume: go on with a copy, under a new id (the saved"
        " conversation stays as it was)",
    )
    add("--json", action="store_true", help="with -p: print one JSON object (--output-format json)")
    add(
        "--output-format",
        choices=OUTPUT_FORMATS,
        help="with -p: the answer as text (default), one JSON object, or stream-json: one JSON"
        " event per line as the turn happens (docs/EVENTS.md)",
    )
    _run_flags(add)
    _model_flags(add)


def _run_flags(add: Callable[..., None]) -> None:
    """What runs without asking, and where."""
    add("--yes", action="store_true", help="the same as --mode yolo")
    add(
        "--mode",
        choices=tuple(MODES),
        help=f"what runs without asking (default {DEFAULT_MODE}: {MODES[DEFAULT_MODE]})",
    )
    add(
        "--sandbox",
        choices=tuple(Mode),
        help="what commands run for the model may reach (default workspace-write: the"
        " workspace and a private /tmp, no secrets, no network; off: your full rights)",
    )
    add("--allow-network", action="store_true", help="let sandboxed commands use the network")
    add(
        "--allow-git",
        action="store_true",
        help="let sandboxed commands write .git/ (git commit) without a question; hooks they"
        " write there run when you next use git",
    )


def _model_flags(add: Callable[..., None]) -> None:
    """Which model, how it reasons and how far a turn goes."""
    add("--model", metavar="NAME", help="model name; 'mock' for the offline mock model")
    add(  # the values are checked with the setting's (mca.config.specs.SPECS)
        "--reasoning",
        metavar="EFFORT",
        help="how hard a reasoning model thinks: none, minimal, low, medium, high, xhigh"
        " (OpenAI's reasoning effort; Anthropic's effort, or its thinking budget)",
    )
    add(
        "--thinking",
        metavar="TOKENS",
        help="Anthropic extended thinking with this budget (at least 1,024; 0: off)",
    )
    add(
        "--max-steps",
        type=int,
        metavar="N",
        help=f"model calls per turn (default {DEFAULT_MAX_STEPS})",
    )
    add("--no-stream", action="store_true", help="do not stream responses")
    add("--ledger", action="store_true", help="print the ledger after every turn")
    add("--record", metavar="FILE", help="record model responses for replay")


def repl_parser() -> argparse.ArgumentParser:
    """The parser for `mca` itself (the REPL and -p)."""
    p = Parser(
        prog="mca",
        description="mini coding agent. Subcommands: tools, skills, ledger, selftest, lab,"
        " sandbox (mca COMMAND --help).",
    )
    p.add_argument("--version", action="version", version=f"mca {__version__}")
    p.add_argument(
        "message", nargs="?", help='the REPL\'s first message (mca "fix the failing test")'
    )
    _session_flags(p)
    global_options(p)
    return p


def command_parser() -> argparse.ArgumentParser:
    """`mca [globals] COMMAND ...`; an ArgumentError (not an exit) when the first word is not a
    command, so that argv can be the REPL's."""
    p = Parser(prog="mca", exit_on_error=False)
    global_options(p, prefix=TOP)
    _session_flags(p, prefix=SESSION)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    shared = parents()
    for command in SUBCOMMANDS:
        command.add_parser(sub, shared)
    return p


def parse_command(argv: Sequence[str]) -> argparse.Namespace | None:
    """A subcommand's arguments (with its `run`), or None: argv is the REPL's."""
    commands = command_parser()
    try:
        args, rest = commands.parse_known_args(list(argv))
    except argparse.ArgumentError:  # the first word is no command: a message
        return None
    if not _is_command(args, argv):
        return None
    if rest:
        commands.error(f"unrecognized arguments: {' '.join(rest)}")
    return settle(args, args.command)


def _is_command(args: argparse.Namespace, argv: Sequence[str]) -> bool:
    """A command word came first: not after `--`, not after one of the session's flags."""
    if args.command is None:
        return False
    if any(key.startswith(SESSION) for key in vars(args)):
        return False
    dashes = list(argv).index("--") if "--" in argv else len(argv)
    return list(argv).index(args.command) < dashes
