"""`mca skills eval FILE --live`: the model's half of triggering, measured too.

The pre-turn stage loads what it is sure of; the model reads the catalog in its system prompt
and can `read_file skill:NAME` for the rest. Offline, `mca skills eval` measures the first half
only. Live, each query is a one-turn session through the configured model, in read-only mode
(nothing is written; commands run in a read-only sandbox where one exists), with the skills
under test installed: a query triggers a skill when the stage loads it *or* the model reads its
SKILL.md. Both halves are reported, and the model's reads of a skill it should not have read.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mca.events import Event, SkillDecision, SkillRead
from mca.skills.evals import EvalFile, EvalFileError, EvalItem, Score, score_multi, score_single
from mca.skills.model import Skill

__all__ = [
    "HALVES",
    "LIVE_STEPS",
    "Asked",
    "LiveFile",
    "LiveRun",
    "installed_copies",
    "live_text",
    "score_live",
]

LIVE_STEPS = 4  # model calls per query: enough to read a skill and answer, not to wander
HALVES = ("stage", "model", "either")


@dataclass(frozen=True)
class Asked:
    """What one query did: the skills the stage loaded, and the skills the model read."""

    stage: tuple[str, ...]
    read: tuple[str, ...]

    def fired(self, half: str) -> list[str]:
        names = {"stage": self.stage, "model": self.read}.get(half)
        if names is None:  # either: the union, in the order each was first seen
            names = tuple(dict.fromkeys((*self.stage, *self.read)))
        return list(names)


class LiveRun:
    """One turn per distinct query. `turn` runs a query as a conversation of one turn (the
    session cleared first) and returns the events it emitted."""

    def __init__(self, turn: Callable[[str], Sequence[Event]]) -> None:
        self.turn = turn
        self._seen: dict[str, Asked] = {}

    def ask(self, query: str) -> Asked:
        """The query's one turn (once per distinct query)."""
        if query in self._seen:
            return self._seen[query]
        try:
            events = self.turn(query)
        except Exception as e:  # a model server's refusal or an unreachable one: said whole
            raise EvalFileError(f"--live: the model failed on {query[:60]!r}: {e}") from e
        stage = [e.name for e in events if isinstance(e, SkillDecision) and e.loaded]
        read = [e.name for e in events if isinstance(e, SkillRead)]
        asked = Asked(tuple(dict.fromkeys(stage)), tuple(dict.fromkeys(read)))
        self._seen[query] = asked
        return asked

    def judge(self, half: str) -> Callable[[str], list[str]]:
        return lambda query: self.ask(query).fired(half)


@dataclass
class LiveFile:
    """One eval file's live result: a score per half, and the wrong reads."""

    file: EvalFile
    skill: str  # '' for a multi-skill file
    scores: dict[str, Score] = field(default_factory=dict)
    wrong_reads: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": str(self.file.path), "skill": self.skill or None}
        for half, score in self.scores.items():
            out[half] = score.to_json()
        out["wrong_reads"] = self.wrong_reads
        return out


def _wrong(item: EvalItem, skill: str, asked: Asked) -> list[str]:
    """The skills the model read that this query should not have made it read."""
    if skill:  # a single-skill file: the skill, and only when it should trigger
        allowed = {skill} if item.label else set()
    else:
        allowed = {item.label} if isinstance(item.label, str) else set()
    return [name for name in asked.read if name not in allowed]


def score_live(evals: EvalFile, skill: str, run: LiveRun) -> LiveFile:
    """The file scored three ways from one live turn per query."""
    out = LiveFile(evals, skill)
    for half in HALVES:
        judge = run.judge(half)
        if evals.kind == "multi":
            out.scores[half] = score_multi(evals.items, judge)
        else:
            out.scores[half] = score_single(evals.items, skill, judge)
    for item in evals.items:
        if wrong := _wrong(item, skill, run.ask(item.query)):
            out.wrong_reads.append({"query": item.query, "read": wrong})
    return out


@contextmanager
def installed_copies(skills: Sequence[Skill]) -> Iterator[Path]:
    """A private skills folder holding a copy of each skill under test (its directory, links
    copied as links), for the live session to discover as a --skills-dir."""
    with tempfile.TemporaryDirectory(prefix="mca-eval-") as tmp:
        root = Path(tmp) / "skills"
        root.mkdir()
        for skill in skills:
            shutil.copytree(skill.dir, root / skill.dir.name, symlinks=True)
        yield root


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def live_text(runs: Sequence[LiveFile], model: str) -> str:
    """Per file: recall and false activations of the stage, the model and either; wrong reads."""
    out = [f"live, through {model} (one turn per query, read-only)"]
    for r in runs:
        what = f"skill {r.skill}" if r.skill else "several skills"
        out.append(f"{r.file.path}  ({what}; {len(r.file.items)} queries)")
        for half in HALVES:
            j = r.scores[half].to_json()
            out.append(
                f"  {half:<7} precision {_pct(j['precision'])}  recall {_pct(j['recall'])}"
                f"  false activations {_pct(j['false_activations'])}"
            )
        out.append(f"  the model read a skill it should not have: {len(r.wrong_reads)} queries")
        for w in r.wrong_reads[:10]:
            out.append(f"    read {', '.join(w['read'])}: {w['query']!r}")
    return "\n".join(out)
