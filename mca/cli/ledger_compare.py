"""`mca ledger compare`: three loading strategies priced on the same sentences."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mca.cli.parents import actions

if TYPE_CHECKING:  # the parser is built on every start: the skills load when the command runs
    from mca.cli.parents import Parents, Subparsers
    from mca.skills.discover import Discovery
    from mca.tokens import Estimator

__all__ = ["add_parser", "compare", "compare_text", "lab_report", "run"]

STRATEGIES = ("eager", "matched", "gated")


@dataclass(frozen=True)
class Cost:
    """Stage-one and stage-two tokens of one strategy for one sentence."""

    stage1: int
    stage2: int

    @property
    def total(self) -> int:
        return self.stage1 + self.stage2

    def to_json(self, eager_total: int) -> dict[str, Any]:
        saving = 100.0 * (eager_total - self.total) / eager_total if eager_total else 0.0
        return {
            "stage1_tokens": self.stage1,
            "stage2_tokens": self.stage2,
            "total_tokens": self.total,
            "saving_pct": round(saving, 1),
        }


def price(
    d: Discovery, sentence: str, est: Estimator, budget: int, root: Path, eager: int
) -> dict[str, Cost]:
    """Eager: every body resident (`eager` tokens, the same for every sentence). Matched:
    catalog + every hit. Gated: catalog + what passes the gates."""
    from mca.skills.inject import render_skill, stage_two_text
    from mca.skills.stage import evaluate
    from mca.skills.trigger import judge, sentence_paths

    catalog = est.count(d.catalog.text)
    paths = [(p, "sentence") for p in sentence_paths(sentence)]
    hits = judge(d.skill_set, sentence, paths)
    matched = stage_two_text([render_skill(h.skill) for h in hits])
    gated = evaluate(d.skill_set, sentence, budget=budget, root=root).injected_text
    return {
        "eager": Cost(eager, 0),
        "matched": Cost(catalog, est.count(matched)),
        "gated": Cost(catalog, est.count(gated)),
    }


def eager_tokens(d: Discovery, est: Estimator) -> int:
    """Every loaded body, rendered as stage two would, resident on every turn."""
    from mca.skills.inject import render_skill, stage_two_text

    return est.count(stage_two_text([render_skill(s) for s in d.skill_set]))


def compare(
    d: Discovery, sentences: Sequence[str], est: Estimator, budget: int, root: Path
) -> dict[str, Any]:
    """Per sentence and in total, per strategy."""
    rows = []
    totals = {k: Cost(0, 0) for k in STRATEGIES}
    eager = eager_tokens(d, est)
    for s in sentences:
        costs = price(d, s, est, budget, root, eager)
        eager = costs["eager"].total
        rows.append({"sentence": s, "strategies": {k: costs[k].to_json(eager) for k in STRATEGIES}})
        totals = {
            k: Cost(totals[k].stage1 + costs[k].stage1, totals[k].stage2 + costs[k].stage2)
            for k in STRATEGIES
        }
    eager_total = totals["eager"].total
    return {
        "estimate": est.label,
        "skills": len(d.skills),
        "sentences": rows,
        "total": {k: totals[k].to_json(eager_total) for k in STRATEGIES},
    }


def compare_text(report: dict[str, Any]) -> str:
    """A readable table of the comparison."""
    lines = [
        f"{report['skills']} skills · tokens {report['estimate']} · stage1 + stage2 = total"
        " (saved vs eager)",
        f"{'sentence':<44} {'eager':>14} {'matched':>24} {'gated':>24}",
    ]

    def cell(c: dict[str, Any], with_saving: bool) -> str:
        text = f"{c['stage1_tokens']:,}+{c['stage2_tokens']:,}={c['total_tokens']:,}"
        return text + (f" ({c['saving_pct']:.0f}%)" if with_saving else "")

    def row(label: str, st: dict[str, Any]) -> str:
        label = label if len(label) <= 44 else label[:43] + "…"
        return (
            f"{label:<44} {cell(st['eager'], False):>14} {cell(st['matched'], True):>24}"
            f" {cell(st['gated'], True):>24}"
        )

    lines += [row(r["sentence"], r["strategies"]) for r in report["sentences"]]
    lines.append(row("total", report["total"]))
    return "\n".join(lines)


LAB_SENTENCES = (
    "what does this project do?",
    "fix the divide-by-zero problem in src/calc.js",
)
LAB_WINDOW = 128_000  # the mock model's window: the catalog budget is 2% of it


def lab_report(repo: Path, sentences: Sequence[str] = LAB_SENTENCES) -> dict[str, Any]:
    """The lab's four packs only (no user or project skills of this machine), as seen from
    fixtures/workspace: the figures the design notes and docs/lab.md quote, the same anywhere."""
    from mca.config.specs import DEFAULT_SKILL_BUDGET
    from mca.skills.catalog import Budget
    from mca.skills.discover import discover
    from mca.skills.model import Root, displayer
    from mca.tokens import Estimator

    ws = repo / "fixtures" / "workspace"
    est = Estimator()
    d = discover(
        [Root(repo / "skills", "explicit", 400)],
        Budget.for_window(LAB_WINDOW),
        est.fits,
        shown=displayer(ws, Path("/nonexistent-home")),
    )
    return compare(d, sentences, est, DEFAULT_SKILL_BUDGET, ws)


def _scrubber(env: Mapping[str, str]) -> Callable[[str], str]:
    """Scrubs a sentence of every known key (config.toml read once, not per sentence)."""
    from mca.config.apikeys import secrets_of
    from mca.state.crash import home_of
    from mca.text.sanitize import scrub

    secrets = secrets_of(env, home_of(env))
    return lambda sentence: scrub(sentence, secrets)


def add_parser(sub: Subparsers, parents: Parents) -> None:
    """`ledger compare`: -C and --skills-dir after it."""
    c = actions(sub, "ledger", "context cost reports", run).add_parser(
        "compare",
        parents=[parents.workspace, parents.skills_dir, parents.json],
        help="eager vs matched vs gated skill loading",
    )
    c.add_argument("sentences", nargs="*", help="sentences (default: stdin, one per line)")
    c.add_argument(
        "--lab", action="store_true", help="the lab's four packs only, its two sentences by default"
    )


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """Entry for `mca ledger compare`: MCA_LAB chooses the policy discovery runs (the --lab
    report always prices the lab's packs as production loads them)."""
    scrubbed = _scrubber(env)
    given = [scrubbed(x) for x in args.sentences]  # shown cut short: scrubbed before
    if args.lab:
        from mca.cli.content import lab_content

        with lab_content() as repo:
            report = lab_report(repo, given or LAB_SENTENCES)
        text = json.dumps(report, indent=2) if args.json else compare_text(report)
        sys.stdout.write(text + "\n")
        return 0
    sentences = given or [scrubbed(ln.strip()) for ln in sys.stdin if ln.strip()]
    if not sentences:
        sys.stderr.write("mca ledger compare: no sentences (give them as arguments or on stdin)\n")
        return 1
    from mca.assembly.wiring import skills_config
    from mca.cli.start import lab_policy
    from mca.config.settings import load_settings
    from mca.skills.runtime import run_discovery
    from mca.tokens import Estimator

    workspace = Path(args.workspace or os.getcwd())
    overrides = {"skills_dirs": tuple(Path(d) for d in args.skills_dir)}
    settings = load_settings(env, workspace=workspace, overrides=overrides)
    config = skills_config(settings.with_(policy=lab_policy(settings.lab)))
    est = Estimator(config.encoding)
    report = compare(run_discovery(config, est), sentences, est, config.budget, config.workspace)
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(compare_text(report) + "\n")
    return 0
