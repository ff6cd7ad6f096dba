"""`mca skills eval FILE --live` (and `--all DIR --live`): the queries through the configured
model, one turn each, in one read-only session that has the skills under test installed
(mca/skills/eval_live.py scores them)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mca.events import Event
from mca.session.faces import HeadlessUI

if TYPE_CHECKING:
    from mca.session.session import Session
    from mca.skills.evals import EvalFile
    from mca.skills.model import Skill
    from mca.skills.policy import Policy

__all__ = ["run_live"]


class Recorder(HeadlessUI):
    """Nobody watches: nothing is approved; the events of the current query are kept."""

    commands = False

    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, event: Event) -> None:
        self.events.append(event)


def _targets(
    args: argparse.Namespace, given: Sequence[Skill], policy: Policy
) -> list[tuple[EvalFile, Skill | None]]:
    """Each eval file with the skill it tests (None: a multi-skill file); `given`: --skill's."""
    from mca.skills.eval_run import skill_beside
    from mca.skills.evals import EvalFileError, find_eval_files, load_evals
    from mca.skills.model import Root
    from mca.skills.scan import scan_roots

    if args.all_dir is None:
        evals = load_evals(Path(args.file))
        if evals.kind == "multi":
            return [(evals, None)]  # the skills --skill names are installed beside
        if len(given) > 1:
            raise EvalFileError(f"{args.file}: a single-skill eval file, and {len(given)} skills")
        return [(evals, given[0] if given else skill_beside(Path(args.file), policy))]
    top = Path(args.all_dir).absolute()
    found = scan_roots([Root(top, "eval", 0)], policy=policy).candidates
    out: list[tuple[EvalFile, Skill | None]] = []
    for skill in sorted((c.skill for c in found if c.skill), key=lambda s: str(s.path)):
        for path in find_eval_files(skill.dir):
            evals = load_evals(path)
            out.append((evals, None if evals.kind == "multi" else skill))
    if not out:
        raise EvalFileError(f"{top}: no trigger-eval files beside any SKILL.md below it")
    return out


def _check_not_shadowed(session: Session, tested: Sequence[Skill], copies: Path) -> None:
    """A skill under test that the session finds elsewhere (a workspace skill of the same name
    wins) would measure that one: refused, naming it."""
    from mca.skills.evals import EvalFileError

    found = session.skills.discovery.skills
    for skill in tested:
        got = found.get(skill.name)
        if got is None or not got.path.is_relative_to(copies):
            where = got.path if got is not None else "nowhere (it did not load)"
            raise EvalFileError(f"--live: the skill under test {skill.name!r} is found at {where}")


def run_live(args: argparse.Namespace, env: Mapping[str, str], policy: Policy) -> int:
    from mca.assembly.assemble import open_session
    from mca.config.settings import load_settings
    from mca.skills.eval_live import LIVE_STEPS, LiveRun, installed_copies, live_text, score_live
    from mca.skills.eval_run import skill_at
    from mca.text.sanitize import visible

    given = [skill_at(Path(d), policy) for d in args.skill]
    targets = _targets(args, given, policy)
    named = [*given, *(s for _, s in targets if s)]
    tested = list({s.name: s for s in named}.values())
    with installed_copies(tested) as copies:
        overrides = {
            "skills_dirs": (*(Path(d) for d in args.skills_dir), copies),
            "mode": "read-only",
            "max_steps": LIVE_STEPS,
        }
        workspace = Path(args.workspace or os.getcwd())
        settings = load_settings(env, workspace=workspace, overrides=overrides)
        recorder = Recorder()
        session = open_session(settings, recorder, log_to_disk=False)
        try:
            _check_not_shadowed(session, tested, copies)

            def turn(query: str) -> list[Event]:
                session.clear()
                recorder.events.clear()
                session.run_turn(query)
                return list(recorder.events)

            run = LiveRun(turn)
            runs = [score_live(evals, s.name if s else "", run) for evals, s in targets]
        finally:
            session.close()
    out = sys.stdout
    if args.json:
        obj = {"model": settings.model, "files": [r.to_json() for r in runs]}
        out.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(visible(live_text(runs, settings.model)) + "\n")
    return 0
