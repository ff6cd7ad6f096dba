"""Command line: argv + env -> Settings, wiring, and the one place errors become exit codes."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from mca import __version__
from mca.errors import McaError, error_line

if TYPE_CHECKING:  # kept out of the import path: `mca --version` must start fast
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import TextIO

    from mca.skills.policy import Policy

EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 130
OUTPUT_FORMATS = ("text", "json", "stream-json")  # what -p prints (--output-format)


def _common(parser: argparse.ArgumentParser) -> None:
    """The global flags: they may come before or after a subcommand."""
    parser.add_argument("-C", dest="workspace", metavar="DIR", help="workspace root (default: .)")
    parser.add_argument(
        "--skills-dir", action="append", default=[], metavar="DIR", help="extra skills root"
    )
    parser.add_argument("--strict-skills", action="store_true", help="refuse bad skills")
    parser.add_argument("--verbose", action="store_true", help="show details")


# Which global flags each subcommand uses (`tools` lists the same eight tools anywhere).
GLOBALS_USED = {
    "tools": ("workspace",),
    "skills": ("workspace", "skills_dir"),
    "ledger": ("workspace", "skills_dir"),
    "selftest": (),
    "lab": (),
    "sandbox": ("workspace",),
}
FLAG_OF = {"workspace": "-C", "skills_dir": "--skills-dir"}


def split_globals(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """The global flags wherever they are (before `--`), and the rest in order."""
    import argparse

    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    _common(p)
    cut = list(argv).index("--") if "--" in argv else len(argv)
    found, rest = p.parse_known_args(list(argv[:cut]))
    return found, rest + list(argv[cut:])


def _for_subcommand(name: str, found: argparse.Namespace, argv: list[str]) -> list[str]:
    """The subcommand's argv with the global flags it uses put back at the end."""
    from mca.errors import ConfigError

    used = GLOBALS_USED[name]
    extra: list[str] = []
    if found.workspace is not None:
        if "workspace" not in used:
            raise ConfigError(f"mca {name} does not take -C (it does not read a workspace)")
        if not os.path.isdir(found.workspace):
            raise ConfigError(f"-C: workspace {found.workspace} is not a directory")
        extra += ["-C", found.workspace] if name != "tools" else []
    for d in found.skills_dir:
        if "skills_dir" not in used:
            raise ConfigError(f"mca {name} does not take --skills-dir")
        extra += ["--skills-dir", d]
    for flag in ("strict_skills", "verbose"):
        if getattr(found, flag):
            raise ConfigError(f"mca {name} does not take --{flag.replace('_', '-')}")
    if not extra:
        return argv
    if name in ("skills", "ledger", "sandbox"):  # the flags belong to the action: after it
        return [*argv, *extra]
    return argv


def main_parser() -> argparse.ArgumentParser:
    """The parser for `mca` itself (REPL and -p)."""
    import argparse

    p = argparse.ArgumentParser(
        prog="mca",
        description="mini coding agent. Subcommands: tools, skills, ledger, selftest, lab.",
    )
    p.add_argument("--version", action="version", version=f"mca {__version__}")
    p.add_argument(
        "message", nargs="?", help='the REPL\'s first message (mca "fix the failing test")'
    )
    p.add_argument(
        "-p",
        "--prompt",
        metavar="SENTENCE",
        nargs="?",
        const="-",
        help="run one turn and print the answer ('-' or nothing: read it from stdin)",
    )
    p.add_argument(
        "-c",
        "--continue",
        dest="resume_last",
        action="store_true",
        help="go on with the last conversation in this workspace",
    )
    p.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="pick a saved conversation to go on with (or open the one with this id)",
    )
    p.add_argument(
        "--json", action="store_true", help="with -p: print one JSON object (--output-format json)"
    )
    p.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        help="with -p: the answer as text (default), one JSON object, or stream-json: one JSON"
        " event per line as the turn happens (docs/EVENTS.md)",
    )
    p.add_argument("--yes", action="store_true", help="the same as --mode yolo")
    p.add_argument(
        "--mode",
        choices=("ask", "auto-edit", "read-only", "yolo"),
        help="what runs without asking (default auto-edit: edits apply, commands ask)",
    )
    p.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "off"),
        help="what commands run for the model may reach (default workspace-write: the"
        " workspace and a private /tmp, no secrets, no network; off: your full rights)",
    )
    p.add_argument(
        "--allow-network", action="store_true", help="let sandboxed commands use the network"
    )
    p.add_argument("--model", help="model name; 'mock' for the offline mock model")
    p.add_argument(  # the values are checked with the setting's (mca.config.SPECS)
        "--reasoning",
        metavar="EFFORT",
        help="how hard a reasoning model thinks: none, minimal, low, medium, high, xhigh"
        " (OpenAI's reasoning effort; Anthropic's effort, or its thinking budget)",
    )
    p.add_argument(
        "--thinking",
        metavar="TOKENS",
        help="Anthropic extended thinking with this budget (at least 1,024; 0: off)",
    )
    p.add_argument("--max-steps", type=int, help="model calls per turn (default 30)")
    p.add_argument("--no-stream", action="store_true", help="do not stream responses")
    p.add_argument("--ledger", action="store_true", help="print the ledger after every turn")
    p.add_argument("--record", metavar="FILE", help="record model responses for replay")
    _common(p)
    return p


def settings_from(args: argparse.Namespace, env: Mapping[str, str]) -> Any:
    """Settings from parsed args and the environment, with MCA_LAB's policy."""
    from mca.config import load_settings

    workspace, overrides = _overrides(args)
    settings = load_settings(env, workspace=workspace, overrides=overrides)
    return settings.with_(policy=lab_policy(settings.lab))


def lab_policy(lab: str) -> Policy | None:
    """The policy MCA_LAB names (None when it is unset: production's, imported only when skills
    are, not on the way to the prompt). The lab picks it, and this is the only place outside the
    lab that asks: the runtime receives a Policy, never the lab."""
    if not lab:
        return None
    from mca.lab.policies import select_policy

    return select_policy(lab)


def _overrides(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The workspace and the settings the flags give."""
    from pathlib import Path

    overrides: dict[str, Any] = {
        "skills_dirs": tuple(Path(d) for d in args.skills_dir),
        "strict_skills": args.strict_skills,
        "verbose": args.verbose,
    }
    for key in (
        "model",
        "max_steps",
        "yes",
        "mode",
        "record",
        "no_stream",
        "ledger",
        "sandbox",
        "allow_network",
        "reasoning",
        "thinking",
    ):
        value = getattr(args, key, None)
        if value is None or value is False:  # not given (0 is a value: it gets checked)
            continue
        if key == "no_stream":
            overrides["stream"] = False
        elif key == "ledger":
            overrides["show_ledger"] = True
        elif key == "record":
            overrides["record"] = Path(value)
        elif key == "allow_network":
            overrides["network"] = True
        else:
            overrides[key] = value
    workspace = Path(args.workspace or os.getcwd())
    if not workspace.is_dir():
        from mca.errors import ConfigError

        raise ConfigError(f"-C: workspace {workspace} is not a directory")
    return workspace, overrides


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

        return run_skills_command(argv, env, lab_policy)

    def ledger(argv: Sequence[str], env: Mapping[str, str]) -> int:
        from mca.ledger_cli import run_ledger_command

        return run_ledger_command(argv, env, lab_policy)

    def selftest(argv: Sequence[str], env: Mapping[str, str]) -> int:
        from mca.selftest import run_selftest_command

        return run_selftest_command(argv, env)

    def lab(argv: Sequence[str], env: Mapping[str, str]) -> int:
        from mca.lab.cli import run_lab_command

        return run_lab_command(argv, env)

    def sandbox(argv: Sequence[str], env: Mapping[str, str]) -> int:
        from mca.sandbox_cli import run_sandbox_command

        return run_sandbox_command(argv, env)

    return {
        "tools": tools,
        "skills": skills,
        "ledger": ledger,
        "selftest": selftest,
        "lab": lab,
        "sandbox": sandbox,
    }


def prompt_text(given: str, stdin: TextIO) -> str:
    """The -p sentence: as given, or read from stdin for '-' (refused on a terminal)."""
    from mca.errors import ConfigError

    if given != "-":
        return given
    if stdin.isatty():
        raise ConfigError("-p: no sentence given (pass one, or pipe it: echo ... | mca -p)")
    text = stdin.read()
    if not text.strip():
        raise ConfigError("-p: the sentence read from stdin is empty")
    return text.strip("\n")


def _output_format(args: argparse.Namespace) -> str:
    """What -p prints: --output-format, or --json for its `json`; either without -p is an
    error (the REPL has one format: the terminal)."""
    from mca.errors import ConfigError

    given = "--json" if args.json else f"--output-format {args.output_format}"
    if args.prompt is None and (args.json or args.output_format):
        raise ConfigError(f"{given} goes with -p (mca -p SENTENCE {given})")
    if args.json and args.output_format not in (None, "json"):
        raise ConfigError(f"--json and --output-format {args.output_format}: give one of them")
    return "json" if args.json else args.output_format or "text"


def _dispatch(argv: Sequence[str], env: Mapping[str, str]) -> int:
    subs = _subcommands()
    found, rest = split_globals(argv)
    if rest and rest[0] in subs:
        from mca.sanitize import scrubbed_stdio

        with scrubbed_stdio(_secrets(env)):  # a command's output is scrubbed like a turn's
            return subs[rest[0]](_for_subcommand(rest[0], found, rest[1:]), env)
    if env.get("SELFTEST") == "1":
        return subs["selftest"](argv, env)
    args = main_parser().parse_args(argv)
    settings = settings_from(args, env)
    from mca.errors import ConfigError

    if args.resume_last and args.resume is not None:
        raise ConfigError("--continue and --resume: give one of them")
    resume = "last" if args.resume_last else args.resume
    output = _output_format(args)
    if args.prompt is not None:
        if args.message is not None:
            raise ConfigError(f"-p and a first message {args.message!r}: give one of them")
        from mca.ui.oneshot import run_oneshot

        sentence = prompt_text(args.prompt, sys.stdin)
        return run_oneshot(settings, sentence, output=output, resume=resume)
    from mca.config import ModelChooser
    from mca.ui.repl import run_repl

    workspace, overrides = _overrides(args)
    chooser = ModelChooser(env, workspace, {**overrides, "policy": settings.policy})
    return run_repl(settings, first=args.message, resume=resume, chooser=chooser)


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Entry point: returns the exit code (0 ok, 1 error, 130 interrupted)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # the fast path: nothing else to import
        sys.stdout.write(f"mca {__version__}\n")
        return EXIT_OK
    env = dict(os.environ if env is None else env)
    from mca.process import make_undumpable, scrub_environ_block

    make_undumpable()
    scrub_environ_block(k for k in env if k.endswith("_API_KEY"))
    try:
        return _dispatch(argv, env)
    except KeyboardInterrupt:
        sys.stderr.write("\nmca: interrupted\n")
        return EXIT_INTERRUPTED
    except McaError as e:
        if env.get("MCA_DEBUG") == "1":
            raise
        sys.stderr.write(error_line(e, _secrets(env)))
        return e.exit_code
    except Exception as e:  # a bug: one line, the details kept for the report
        if env.get("MCA_DEBUG") == "1":
            raise
        from mca.crash import home_of, report_bug

        sys.stderr.write(f"mca: {report_bug(e, home_of(env), _secrets(env))}\n")
        return EXIT_ERROR


def _secrets(env: Mapping[str, str]) -> tuple[str, ...]:
    """Every key the environment and config.toml hold, for what the edge prints or keeps."""
    from mca.crash import home_of
    from mca.keys import secrets_of

    return secrets_of(env, home_of(env))
