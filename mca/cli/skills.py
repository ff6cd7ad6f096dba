"""`mca skills list | check | why | eval`: discovery and judgment without any model (but for
`eval --live`, mca/cli/skills_eval.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mca.cli.parents import actions

if TYPE_CHECKING:
    from mca.cli.parents import Parents, Subparsers
    from mca.skills.model import Candidate, Skill
    from mca.skills.policy import Policy
    from mca.skills.runtime import SkillsConfig

__all__ = ["add_parser", "check_candidates", "run"]

ACTIONS = {
    "list": "every candidate skill and its status",
    "check": "parse and validate SKILL.md files, skill dirs or roots",
    "why": "what the pre-turn stage would do for a sentence",
    "eval": "run trigger-eval files through the pre-turn stage",
}


def add_parser(sub: Subparsers, parents: Parents) -> None:
    """`skills ACTION`: -C and --skills-dir after list, why and eval (check takes paths)."""
    found = actions(sub, "skills", "inspect skills (no model)", run)
    for name, help_text in ACTIONS.items():
        if name == "check":
            s = found.add_parser(name, parents=[parents.json], help=help_text)
            s.add_argument("paths", nargs="+", metavar="PATH")
            continue
        shared = [parents.workspace, parents.skills_dir, parents.json]
        s = found.add_parser(name, parents=shared, help=help_text)
        if name == "why":
            s.add_argument("sentence")
            s.add_argument("--path", action="append", default=[], metavar="FILE")
        if name == "eval":
            s.add_argument("file", nargs="?", metavar="FILE")
            s.add_argument("--skill", action="append", default=[], metavar="DIR")
            s.add_argument("--all", dest="all_dir", metavar="DIR")
            s.add_argument(
                "--live",
                action="store_true",
                help="each query through the configured model too (one read-only turn each):"
                " the stage's loads, the model's reads of SKILL.md, and either",
            )


def _config(args: argparse.Namespace, env: Mapping[str, str]) -> SkillsConfig:
    from mca.assembly.wiring import skills_config
    from mca.cli.start import lab_policy
    from mca.config.settings import load_settings

    workspace = Path(args.workspace or os.getcwd())
    overrides = {"skills_dirs": tuple(Path(d) for d in args.skills_dir)}
    settings = load_settings(env, workspace=workspace, overrides=overrides)
    return skills_config(settings.with_(policy=lab_policy(settings.lab)))


def check_candidates(paths: Sequence[str]) -> tuple[list[Candidate], list[str]]:
    """Candidates for SKILL.md files, skill directories, or roots to scan; and the problems
    with paths that gave none (missing, not a skill file, no SKILL.md below)."""
    from mca.skills.advice import advice
    from mca.skills.model import SKILL_FILE, Root
    from mca.skills.scan import load_candidate, scan_roots

    out: list[Candidate] = []
    problems: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file() and p.name != SKILL_FILE:
            problems.append(f"{raw}: not a skill file (discovery only loads {SKILL_FILE})")
        elif p.is_file():
            out.append(load_candidate(Path(os.path.abspath(p)), None))
        elif (p / SKILL_FILE).is_file():
            out.append(load_candidate(Path(os.path.abspath(p / SKILL_FILE)), None))
        elif p.is_dir():
            found = scan_roots([Root(Path(os.path.abspath(p)), "check", 0)]).candidates
            if not found:
                problems.append(f"{raw}: no {SKILL_FILE} found in this directory or below")
            out += found
        else:
            problems.append(f"{raw}: no such file or directory")
    for c in out:
        c.root = None
        if c.skill is not None:
            c.diagnostics += advice(c.skill)
    return out, problems


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """Entry for `mca skills ...`; returns the exit code. MCA_LAB chooses the policy that
    discovery and the stage run (mca.cli.lab_policy)."""
    from mca.skills.runtime import run_discovery
    from mca.skills.stage import evaluate
    from mca.skills.views import (
        candidate_json,
        candidates_text,
        discovery_text,
        list_json,
        stage_text,
    )
    from mca.text.sanitize import visible
    from mca.tokens import Estimator

    out = sys.stdout
    if args.action == "check":
        cands, problems = check_candidates(args.paths)
        for problem in problems:
            sys.stderr.write(f"mca skills check: {visible(problem)}\n")
        if args.json:
            out.write(json.dumps([candidate_json(c) for c in cands], indent=2, ensure_ascii=False))
            out.write("\n")
        elif cands:
            out.write(visible(candidates_text(cands)) + "\n")
        return 1 if problems or any(c.has_error for c in cands) else 0
    config = _config(args, env)
    estimator = Estimator(config.encoding)
    discovery = run_discovery(config, estimator)
    if args.action == "eval":
        return _eval(args, env, discovery.skills, config, discovery.policy)
    if args.action == "list":
        if args.json:
            obj = list_json(discovery, estimator.count, estimator.label)
            out.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")
        else:
            out.write(visible(discovery_text(discovery)) + "\n")
        return 0
    result = evaluate(
        discovery.skill_set,
        args.sentence,
        budget=config.budget,
        root=config.workspace,
        extra_paths=args.path,
        policy=discovery.policy,
    )
    tokens = estimator.count(result.injected_text)
    if args.json:
        obj = result.to_json()
        obj.update(injected_tokens=tokens, tokens_label=estimator.label)
        out.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(visible(stage_text(result, tokens, estimator.label)) + "\n")
    return 0


def _eval(
    args: argparse.Namespace,
    env: Mapping[str, str],
    installed: Mapping[str, Skill],
    config: SkillsConfig,
    policy: Policy,
) -> int:
    """`mca skills eval FILE [--skill DIR]...` or `mca skills eval --all DIR`."""
    from mca.skills.eval_run import EvalReport, report_text, run_all, run_file, skill_at
    from mca.skills.evals import EvalFileError
    from mca.text.sanitize import visible

    if (args.file is None) == (args.all_dir is None):
        raise EvalFileError("mca skills eval: give an eval FILE, or --all DIR (not both)")
    if args.live:
        from mca.cli.skills_eval import run_live

        return run_live(args, env, policy)
    budget, root = config.budget, config.workspace
    if args.all_dir is not None:
        report = run_all(Path(args.all_dir), installed, budget=budget, root=root, policy=policy)
    else:
        tested = [skill_at(Path(d), policy) for d in args.skill]
        run = run_file(Path(args.file), installed, tested, budget=budget, root=root, policy=policy)
        report = EvalReport([run])
    out = sys.stdout
    if args.json:
        out.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(visible(report_text(report)) + "\n")
    return 0
