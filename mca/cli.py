"""Command line: argv + env -> Settings, wiring, and the one place errors become exit codes."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from mca import __version__
from mca.errors import McaError

if TYPE_CHECKING:  # kept out of the import path: `mca --version` must start fast
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import TextIO

EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 130


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-C", dest="workspace", metavar="DIR", help="workspace root (default: .)")
    parser.add_argument(
        "--skills-dir", action="append", default=[], metavar="DIR", help="extra skills root"
    )
    parser.add_argument("--strict-skills", action="store_true", help="refuse bad skills")
    parser.add_argument("--verbose", action="store_true", help="show details")


def main_parser() -> argparse.ArgumentParser:
    """The parser for `mca` itself (REPL and -p)."""
    import argparse

    p = argparse.ArgumentParser(
        prog="mca",
        description="mini coding agent. Subcommands: tools, skills, ledger, selftest, lab.",
    )
    p.add_argument("--version", action="version", version=f"mca {__version__}")
    p.add_argument("-p", "--prompt", metavar="SENTENCE", help="run one turn and print the answer")
    p.add_argument("--json", action="store_true", help="with -p: print one JSON object")
    p.add_argument("--yes", action="store_true", help="the same as --mode yolo")
    p.add_argument(
        "--mode",
        choices=("ask", "auto-edit", "read-only", "yolo"),
        help="what runs without asking (default auto-edit: edits apply, commands ask)",
    )
    p.add_argument("--model", help="model name; 'mock' for the offline mock model")
    p.add_argument("--max-steps", type=int, help="model calls per turn (default 30)")
    p.add_argument("--no-stream", action="store_true", help="do not stream responses")
    p.add_argument("--ledger", action="store_true", help="print the ledger after every turn")
    p.add_argument("--record", metavar="FILE", help="record model responses for replay")
    _common(p)
    return p


def settings_from(args: argparse.Namespace, env: Mapping[str, str]) -> Any:
    """Settings from parsed args and the environment."""
    from pathlib import Path

    from mca.config import load_settings

    overrides: dict[str, Any] = {
        "skills_dirs": tuple(Path(d) for d in args.skills_dir),
        "strict_skills": args.strict_skills,
        "verbose": args.verbose,
    }
    for key in ("model", "max_steps", "yes", "mode", "record", "no_stream", "ledger"):
        value = getattr(args, key, None)
        if value is None or value is False:  # not given (0 is a value: it gets checked)
            continue
        if key == "no_stream":
            overrides["stream"] = False
        elif key == "ledger":
            overrides["show_ledger"] = True
        elif key == "record":
            overrides["record"] = Path(value)
        else:
            overrides[key] = value
    workspace = Path(args.workspace or os.getcwd())
    if not workspace.is_dir():
        from mca.errors import ConfigError

        raise ConfigError(f"-C: workspace {workspace} is not a directory")
    return load_settings(env, workspace=workspace, overrides=overrides)


def _run_tools(argv: Sequence[str], out: TextIO) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="mca tools", description="print the tool registry")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    from mca.tools import REGISTRY
    from mca.ui.render import tools_json, tools_text

    tools = list(REGISTRY.values())
    out.write((tools_json(tools) if args.json else tools_text(tools)) + "\n")
    return EXIT_OK


def _subcommands() -> dict[str, Callable[[Sequence[str], Mapping[str, str]], int]]:
    def tools(argv: Sequence[str], env: Mapping[str, str]) -> int:
        return _run_tools(argv, sys.stdout)

    def skills(argv: Sequence[str], env: Mapping[str, str]) -> int:
        from mca.skills.commands import run_skills_command

        return run_skills_command(argv, env)

    def ledger(argv: Sequence[str], env: Mapping[str, str]) -> int:
        from mca.ledger_cli import run_ledger_command

        return run_ledger_command(argv, env)

    def selftest(argv: Sequence[str], env: Mapping[str, str]) -> int:
        from mca.selftest import run_selftest_command

        return run_selftest_command(argv, env)

    def lab(argv: Sequence[str], env: Mapping[str, str]) -> int:
        from mca.lab.cli import run_lab_command

        return run_lab_command(argv, env)

    return {
        "tools": tools,
        "skills": skills,
        "ledger": ledger,
        "selftest": selftest,
        "lab": lab,
    }


def _dispatch(argv: Sequence[str], env: Mapping[str, str]) -> int:
    subs = _subcommands()
    if argv and argv[0] in subs:
        return subs[argv[0]](argv[1:], env)
    if env.get("SELFTEST") == "1":
        return subs["selftest"](argv, env)
    args = main_parser().parse_args(argv)
    settings = settings_from(args, env)
    if args.prompt is not None:
        from mca.ui.oneshot import run_oneshot

        return run_oneshot(settings, args.prompt, as_json=args.json)
    from mca.ui.repl import run_repl

    return run_repl(settings)


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Entry point: returns the exit code (0 ok, 1 error, 130 interrupted)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # the fast path: nothing else to import
        sys.stdout.write(f"mca {__version__}\n")
        return EXIT_OK
    env = dict(os.environ if env is None else env)
    from mca.process import make_undumpable

    make_undumpable()
    try:
        return _dispatch(argv, env)
    except KeyboardInterrupt:
        sys.stderr.write("\nmca: interrupted\n")
        return EXIT_INTERRUPTED
    except McaError as e:
        if env.get("MCA_DEBUG") == "1":
            raise
        from mca.sanitize import visible

        sys.stderr.write(f"mca: error: {visible(str(e))}\n")
        return e.exit_code
    except Exception as e:  # a bug: one line, the details kept for the report
        if env.get("MCA_DEBUG") == "1":
            raise
        from mca.crash import home_of, report_bug

        keys = [v for k, v in env.items() if k.endswith("_API_KEY")]
        sys.stderr.write(f"mca: {report_bug(e, home_of(env), keys)}\n")
        return EXIT_ERROR
