"""The pre-turn stage: judge the sentence, apply the gates, inject bodies and @references."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mca.errors import ToolError
from mca.fsutil import ContainmentError, NotRegularFile, is_dir, read_head
from mca.provenance import defang
from mca.skills.gates import Decision
from mca.skills.inject import Block, stage_two_text
from mca.skills.model import Skill, xml_escape
from mca.skills.policy import PRODUCTION, Policy
from mca.skills.trigger import Hit, SkillSet, sentence_paths
from mca.tools.paths import resolve_in
from mca.types import KIND_REFERENCE, KIND_SKILLS, Message

MAX_REFERENCE_CHARS = 20_000
Emit = Callable[[str, Mapping[str, Any]], None]


@dataclass
class StageResult:
    """What the stage decided for one sentence."""

    hits: list[Hit] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    injected_text: str = ""
    references: list[tuple[str, str]] = field(default_factory=list)  # (path, text or error)
    reference_text: str = ""
    paths: list[tuple[str, str]] = field(default_factory=list)

    @property
    def blocks(self) -> list[Block]:
        return [d.block for d in self.decisions if d.loaded and d.block is not None]

    def to_json(self) -> dict[str, Any]:
        return {
            "hits": [
                {"name": h.skill.name, "score": h.score, "reasons": [str(r) for r in h.reasons]}
                for h in self.hits
            ],
            "decisions": [
                {"name": d.name, "loaded": d.loaded, "reason": d.reason, "chars": d.chars}
                for d in self.decisions
            ],
            "injected_chars": len(self.injected_text),
            "injected_text": self.injected_text,
        }


def read_reference(root: Path, rel: str) -> str:
    """An @reference's content: workspace-contained, a regular text file, capped."""
    target = resolve_in(root, rel)
    if is_dir(target):
        raise ToolError(f"@{rel} is a directory")
    try:
        data, size = read_head(target, root.resolve(), limit=MAX_REFERENCE_CHARS * 4)
    except FileNotFoundError:
        raise ToolError(f"@{rel}: no such file") from None
    except (ContainmentError, NotRegularFile) as e:
        raise ToolError(f"@{rel}: {e.strerror}") from None
    except OSError as e:
        raise ToolError(f"@{rel}: cannot read ({e.strerror})") from None
    if b"\x00" in data[:8192]:
        raise ToolError(f"@{rel}: binary file, {size:,} bytes; not attached")
    text = data.decode("utf-8", errors="replace")
    if len(text) > MAX_REFERENCE_CHARS or size > len(data):
        text = (
            text[:MAX_REFERENCE_CHARS]
            + f"\n[... cut at {MAX_REFERENCE_CHARS:,} characters of a {size:,}-byte file;"
            " use read_file]"
        )
    return text


def evaluate(
    skills: Sequence[Skill],
    sentence: str,
    *,
    budget: int,
    root: Path,
    touched: Sequence[str] = (),
    extra_paths: Sequence[str] = (),
    in_context: Mapping[str, int] | None = None,
    policy: Policy = PRODUCTION,
) -> StageResult:
    """Judgment + gates + rendering for one sentence; no model, no side effects."""
    written = sentence_paths(sentence)
    paths = [(p, "sentence") for p in written]
    paths += [(p, "given with --path") for p in extra_paths]
    paths += [(p, "read or written last turn") for p in touched]
    hits = policy.judge(skills, sentence, paths)
    present = in_context or {}
    by_name = {s.name: s for s in skills if s.name in present} if present else {}
    held = {
        by_name[n].domain_key: n for n in sorted(present, key=present.__getitem__) if n in by_name
    }
    decisions = policy.gates(hits, budget, policy.render, present, held)
    result = StageResult(hits, decisions, paths=paths)
    result.injected_text = stage_two_text(result.blocks)
    refs = [p for p in written if f"@{p}" in sentence]
    for rel in refs:
        try:
            result.references.append((rel, read_reference(root, rel)))
        except ToolError as e:
            result.references.append((rel, f"[{e}]"))
    if result.references:
        result.reference_text = "\n\n".join(
            f'<reference path="{xml_escape(rel, True)}">\n{defang(text)}\n</reference>'
            for rel, text in result.references
        )
    return result


class SkillStage:
    """The agent's PreTurn: remembers what is in context, logs every decision."""

    def __init__(
        self,
        skills: Mapping[str, Skill],
        *,
        budget: int,
        root: Path,
        touched: Callable[[], Sequence[str]],
        emit: Emit,
        policy: Policy = PRODUCTION,
    ) -> None:
        self.skill_set = SkillSet(skills[k] for k in sorted(skills))
        self.budget = budget
        self.root = root
        self.touched = touched
        self.emit = emit
        self.policy = policy
        self.last: StageResult | None = None
        self.history: list[tuple[int, StageResult]] = []

    def __call__(self, sentence: str, history: Sequence[Message], turn: int) -> list[Message]:
        present = {name: m.turn for m in history if m.kind == KIND_SKILLS for name in m.skills}
        result = evaluate(
            self.skill_set,
            sentence,
            budget=self.budget,
            root=self.root,
            touched=sorted(self.touched()),
            in_context=present,
            policy=self.policy,
        )
        self.last = result
        self.history.append((turn, result))
        self._log(result, turn)
        out: list[Message] = []
        if result.injected_text:
            names = tuple(b.name for b in result.blocks)
            out.append(
                Message(
                    "user",
                    result.injected_text,
                    kind=KIND_SKILLS,
                    protected=True,
                    turn=turn,
                    skills=names,
                )
            )
        if result.reference_text:
            out.append(Message("user", result.reference_text, kind=KIND_REFERENCE, turn=turn))
        return out

    def _log(self, result: StageResult, turn: int) -> None:
        for d in result.decisions:
            h = d.hit
            outcome = d.reason if d.loaded else f"not loaded: {d.reason}"
            hit = {"turn": turn, "name": d.name, "score": h.score}
            self.emit(
                "skill.hit",
                {**hit, "reasons": [str(r) for r in h.reasons], "line": f"{h.line()}  → {outcome}"},
            )
            decision = {"turn": turn, "name": d.name, "loaded": d.loaded, "reason": d.reason}
            self.emit("skill.decision", {**decision, "chars": d.chars})
        injected = [b.name for b in result.blocks]
        chars = len(result.injected_text)
        self.emit("skill.injected", {"turn": turn, "chars": chars, "skills": injected})
