"""`mca skills eval`: run trigger-eval files through the real pre-turn stage, offline.

The installed skills are the session's (workspace, user, --skills-dir), plus the skill under
test (--skill DIR, or the SKILL.md beside the eval file), which replaces an installed skill of
the same name. `--all DIR` runs every eval file found beside the SKILL.md files under DIR, each
skill judged among the installed ones and the other skills under DIR.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mca.skills.evals import (
    EvalFile,
    EvalFileError,
    Score,
    find_eval_files,
    load_evals,
    score_multi,
    score_single,
    triggered,
)
from mca.skills.model import SKILL_FILE, Root, Skill
from mca.skills.policy import PRODUCTION, Policy
from mca.skills.scan import load_candidate, scan_roots
from mca.skills.stage import evaluate
from mca.skills.trigger import SkillSet

__all__ = [
    "SEARCH_UP",
    "EvalReport",
    "FileRun",
    "report_text",
    "run_all",
    "run_file",
    "skill_at",
    "skill_beside",
    "stage_judge",
]

SEARCH_UP = 2  # an eval file may sit this many directories below its SKILL.md


@dataclass
class FileRun:
    """One eval file's result."""

    file: EvalFile
    skill: str  # '' for a multi-skill file
    score: Score


@dataclass
class EvalReport:
    runs: list[FileRun] = field(default_factory=list)

    @property
    def total(self) -> Score:
        out = Score()
        for r in self.runs:
            out.add(r.score)
        return out

    def to_json(self) -> dict[str, Any]:
        files = [
            {"file": str(r.file.path), "kind": r.file.kind, "skill": r.skill or None}
            | r.score.to_json()
            for r in self.runs
        ]
        total = self.total.to_json()
        total.pop("misses")
        return {"files": files, "total": total}


def skill_at(path: Path, policy: Policy = PRODUCTION) -> Skill:
    """The skill of a directory or SKILL.md; EvalFileError when it does not load."""
    target = path if path.name == SKILL_FILE else path / SKILL_FILE
    if not target.is_file():
        raise EvalFileError(f"{path}: no {SKILL_FILE} here")
    c = load_candidate(target.absolute(), None, policy=policy)
    if c.skill is None:
        why = "; ".join(d.message for d in c.diagnostics if d.level == "error") or "not loaded"
        raise EvalFileError(f"{target}: the skill does not load ({why})")
    return c.skill


def skill_beside(file: Path, policy: Policy = PRODUCTION) -> Skill:
    """The skill whose SKILL.md is in the eval file's directory or up to SEARCH_UP above it."""
    here = file.absolute().parent
    for d in [here, *list(here.parents)[:SEARCH_UP]]:
        if (d / SKILL_FILE).is_file():
            return skill_at(d, policy)
    raise EvalFileError(f"{file}: no {SKILL_FILE} beside it or above it; give --skill DIR")


def stage_judge(skills: Sequence[Skill], budget: int, root: Path, policy: Policy) -> Any:
    """sentence -> the names of the skills the stage judges hits."""
    pool = SkillSet(sorted(skills, key=lambda s: s.name))

    def judge(sentence: str) -> list[str]:
        return triggered(
            evaluate(pool, sentence, budget=budget, root=root, policy=policy).decisions
        )

    return judge


def _with(installed: Mapping[str, Skill], extra: Sequence[Skill]) -> list[Skill]:
    return list(({**installed} | {s.name: s for s in extra}).values())


def run_file(
    path: Path,
    installed: Mapping[str, Skill],
    tested: Sequence[Skill],
    *,
    budget: int,
    root: Path,
    policy: Policy = PRODUCTION,
) -> FileRun:
    """One eval file: single-skill files need exactly one tested skill (found beside the file
    when none is given); multi-skill files judge the installed skills plus the tested ones."""
    evals = load_evals(path)
    if evals.kind == "multi":
        judge = stage_judge(_with(installed, tested), budget, root, policy)
        return FileRun(evals, "", score_multi(evals.items, judge))
    if len(tested) > 1:
        raise EvalFileError(f"{path}: a single-skill eval file, and {len(tested)} skills given")
    skill = tested[0] if tested else skill_beside(path, policy)
    judge = stage_judge(_with(installed, [skill]), budget, root, policy)
    return FileRun(evals, skill.name, score_single(evals.items, skill.name, judge))


def run_all(
    top: Path,
    installed: Mapping[str, Skill],
    *,
    budget: int,
    root: Path,
    policy: Policy = PRODUCTION,
) -> EvalReport:
    """Every eval file beside the SKILL.md files under `top`."""
    if not top.is_dir():
        raise EvalFileError(f"{top}: not a directory")
    found = scan_roots([Root(top.absolute(), "eval", 0)], policy=policy).candidates
    skills = [c.skill for c in found if c.skill is not None]
    pool = _with(installed, skills)
    report = EvalReport()
    judge = stage_judge(pool, budget, root, policy)
    for skill in sorted(skills, key=lambda s: str(s.path)):
        for path in find_eval_files(skill.dir):
            evals = load_evals(path)
            if evals.kind == "multi":
                report.runs.append(FileRun(evals, "", score_multi(evals.items, judge)))
            else:
                score = score_single(evals.items, skill.name, judge)
                report.runs.append(FileRun(evals, skill.name, score))
    if not report.runs:
        raise EvalFileError(f"{top}: no trigger-eval files beside any {SKILL_FILE} below it")
    return report


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def report_text(report: EvalReport, show_misses: int = 20) -> str:
    """Per file: counts, precision, recall, accuracy, false activations; then the misses."""
    out = []
    for r in report.runs:
        j = r.score.to_json()
        what = f"skill {r.skill}" if r.skill else "several skills"
        out.append(
            f"{r.file.path}  ({what}; {j['queries']} queries: {j['should_trigger']} should"
            f" trigger, {j['should_not_trigger']} should not)"
        )
        out.append(
            f"  precision {_pct(j['precision'])}  recall {_pct(j['recall'])}"
            f"  accuracy {_pct(j['accuracy'])}  false activations {_pct(j['false_activations'])}"
        )
        for m in j["misses"][:show_misses]:
            fired = ", ".join(m["fired"]) or "nothing"
            want = m["expected"]
            label = (
                ("should trigger" if want else "should not trigger")
                if isinstance(want, bool)
                else f"expected {want or 'none'}"
            )
            out.append(f"  miss: {label}, fired {fired}: {m['query']!r}")
        if len(j["misses"]) > show_misses:
            out.append(f"  ... {len(j['misses']) - show_misses} more misses (--json has all)")
    if len(report.runs) > 1:
        t = report.total.to_json()
        out.append(
            f"total: {t['queries']} queries  precision {_pct(t['precision'])}"
            f"  recall {_pct(t['recall'])}  accuracy {_pct(t['accuracy'])}"
            f"  false activations {_pct(t['false_activations'])}"
        )
    return "\n".join(out)
