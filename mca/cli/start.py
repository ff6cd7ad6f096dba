"""The REPL and -p, assembled: their arguments -> the settings, each part's config, and the
face around a session (the faces never read the settings: mca/assembly/wiring.py builds what
they get)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mca.assembly.wiring import face_config, skills_config
from mca.config.settings import Settings, load_settings
from mca.errors import ConfigError

if TYPE_CHECKING:
    from mca.session.faces import UI
    from mca.session.session import Session
    from mca.skills.ahead import Ahead
    from mca.skills.policy import Policy
    from mca.ui.oneshot import OneShot
    from mca.ui.repl import Repl

__all__ = ["lab_policy", "oneshot_for", "prompt_text", "repl_for", "run_session", "settings_from"]


def lab_policy(lab: str) -> Policy | None:
    """The policy MCA_LAB names (None when it is unset: production's, imported only when skills
    are, not on the way to the prompt). The lab picks it, and this is the only place outside the
    lab that asks: the runtime receives a Policy, never the lab."""
    if not lab:
        return None
    from mca.lab.policies import select_policy

    return select_policy(lab)


FLAGS = ("model", "max_steps", "yes", "mode", "sandbox", "reasoning", "thinking")  # as named


def overrides(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """The workspace and the settings the flags give (a flag not given gives none; 0 is a
    value: it gets checked)."""
    found: dict[str, Any] = {
        "skills_dirs": tuple(Path(d) for d in args.skills_dir),
        "strict_skills": args.strict_skills,
        "verbose": args.verbose,
    }
    given = {k: getattr(args, k) for k in FLAGS}
    found |= {k: v for k, v in given.items() if v is not None and v is not False}
    found |= {"stream": False} if args.no_stream else {}
    found |= {"show_ledger": True} if args.ledger else {}
    found |= {"record": Path(args.record)} if args.record else {}
    found |= {"network": True} if args.allow_network else {}
    found |= {"allow_git": True} if args.allow_git else {}
    workspace = Path(args.workspace or os.getcwd())
    if not workspace.is_dir():
        raise ConfigError(f"-C: workspace {workspace} is not a directory")
    return workspace, found


def settings_from(args: argparse.Namespace, env: Mapping[str, str]) -> Settings:
    """Settings from the REPL's arguments and the environment, with MCA_LAB's policy."""
    workspace, given = overrides(args)
    settings = load_settings(env, workspace=workspace, overrides=given)
    return settings.with_(policy=lab_policy(settings.lab))


def prompt_text(given: str, stdin: TextIO, err: TextIO | None = None) -> str:
    """The -p sentence: as given, with what is piped in appended (a line on `err` says how
    much), or read from stdin for '-' (refused on a terminal)."""
    if given != "-":
        from mca.cli.piped import attach, read_piped

        piped = read_piped(stdin, err or sys.stderr)
        sentence, note = attach(given, piped) if piped is not None else (given, "")
        if note:
            from mca.ui.width import fitted

            (err or sys.stderr).write(fitted(note, err or sys.stderr) + "\n")
        return sentence
    if stdin.isatty():
        raise ConfigError("-p: no sentence given (pass one, or pipe it: echo ... | mca -p)")
    text = stdin.read()
    if not text.strip():
        raise ConfigError("-p: the sentence read from stdin is empty")
    return text.strip("\n")


def output_format(args: argparse.Namespace) -> str:
    """What -p prints: --output-format, or --json for its `json`; either without -p is an
    error (the REPL has one format: the terminal)."""
    given = "--json" if args.json else f"--output-format {args.output_format}"
    if args.prompt is None and (args.json or args.output_format):
        raise ConfigError(f"{given} goes with -p (mca -p SENTENCE {given})")
    if args.json and args.output_format not in (None, "json"):
        raise ConfigError(f"--json and --output-format {args.output_format}: give one of them")
    return "json" if args.json else args.output_format or "text"


def _opener(
    settings: Settings, one_shot: bool = False, ahead: Ahead | None = None
) -> Callable[[UI], Session]:
    """A session of these settings around a face's UI, built when the face asks (the REPL: in
    the background, once its prompt is up). `ahead`: its skills, being discovered meanwhile;
    its child is gone when the opener returns, even when the session could not be built."""

    def opener(ui: UI) -> Session:
        from mca.assembly.assemble import open_session

        try:
            return open_session(settings, ui, one_shot=one_shot, ahead=ahead)
        finally:
            if ahead is not None:
                ahead.close()

    return opener


def repl_for(settings: Settings, **kw: Any) -> Repl:
    """The REPL around a session of these settings (`kw`: the Repl's own, an `opener` too)."""
    from mca.ui.repl import Repl

    opener = kw.pop("opener", None) or _opener(settings)
    return Repl(face_config(settings), opener, **kw)


def discover_ahead(settings: Settings) -> Ahead | None:
    """-p's skills discovered in a child while this process imports the rest (mca.skills.ahead:
    None when it cannot be, or when a server will be asked for its window, which changes the
    skills' config and would leave the child's work unused)."""
    from mca.assembly.wiring import model_options
    from mca.models import asks_window
    from mca.skills.ahead import start

    if asks_window(model_options(settings)):
        return None
    return start(skills_config(settings))


def oneshot_for(settings: Settings, **kw: Any) -> OneShot:
    """-p around a one-shot session of these settings (`kw`: OneShot's own, `opener` too)."""
    opener = kw.pop("opener", None) or _opener(settings, True, discover_ahead(settings))
    from mca.ui.oneshot import OneShot  # imported while the skills are found (discover_ahead)

    return OneShot(face_config(settings), opener, **kw)


def run_session(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """The REPL, or one turn with -p."""
    settings = settings_from(args, env)
    if args.resume_last and args.resume is not None:
        raise ConfigError("--continue and --resume: give one of them")
    resume = "last" if args.resume_last else args.resume
    if args.fork and resume is None:
        raise ConfigError("--fork goes with --continue or --resume ID (what is there to fork?)")
    output = output_format(args)
    if args.prompt is not None:
        if args.message is not None:
            raise ConfigError(f"-p and a first message {args.message!r}: give one of them")
        sentence = prompt_text(args.prompt, sys.stdin)
        return oneshot_for(settings).run(sentence, output, resume, fork=args.fork)
    from mca.assembly.chooser import ModelChooser

    workspace, given = overrides(args)
    chooser = ModelChooser(env, workspace, {**given, "policy": settings.policy})
    repl = repl_for(settings, first=args.message, resume=resume, fork=args.fork, chooser=chooser)
    return repl.run()
