"""The pre-turn stage: judge the sentence, apply the gates, inject bodies and @references."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mca.context.provenance import defang
from mca.errors import ToolError
from mca.events import (
    EventSink,
    SkillDecision,
    SkillHit,
    SkillRead,
    SkillReplaced,
    SkillsInjected,
)
from mca.fs.careful import ContainmentError, NotRegularFile, is_dir, read_head
from mca.skills.gates import Decision, gate_read
from mca.skills.inject import Block, stage_two_text
from mca.skills.model import SKILL_FILE, Hit, Skill, xml_escape
from mca.skills.policy import PRODUCTION, Policy
from mca.skills.switches import withhold
from mca.skills.trigger import SkillSet, sentence_paths
from mca.types import KIND_REFERENCE, KIND_SKILLS, Message
from mca.workspace.paths import resolve_in

__all__ = [
    "HISTORY_KEPT",
    "MAX_REFERENCE_CHARS",
    "READ_HEADER",
    "SkillStage",
    "StageResult",
    "evaluate",
    "read_reference",
]

MAX_REFERENCE_CHARS = 20_000
HISTORY_KEPT = 8  # stage results kept: the turn in flight's, for its ledger, and /why's


@dataclass
class StageResult:
    """What the stage decided for one sentence."""

    hits: list[Hit] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    injected_text: str = ""
    references: list[tuple[str, str]] = field(default_factory=list)  # (path, text or error)
    read: list[Block] = field(default_factory=list)  # skills the model read this turn
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
    allowed, kept_out = withhold(hits)  # a skill's own switch, whatever the policy
    decisions = policy.gates(allowed, budget, policy.render, present, held)
    decisions += [Decision(hit, False, why) for hit, why in kept_out]
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


READ_HEADER = (
    "mca loaded this skill because you asked to read it. Follow it; paths inside a skill are"
    " relative to its dir."
)


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _key(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        return _key(os.stat(path))
    except OSError:
        return None


def _present(history: Sequence[Message]) -> dict[str, int]:
    """Skills in context (injected or read), with the turn each came in."""
    return {name: m.turn for m in history if m.kind == KIND_SKILLS for name in m.skills}


class SkillStage:
    """The agent's PreTurn and the tools' SkillAccess: remembers what is in context, logs
    every decision."""

    def __init__(
        self,
        skills: Mapping[str, Skill],
        *,
        budget: int,
        root: Path,
        emit: EventSink,
        policy: Policy = PRODUCTION,
        skill_set: SkillSet | None = None,
    ) -> None:
        """`skill_set`: the same skills with their indexes (discovery's, with its cache)."""
        self.skill_set = (
            skill_set if skill_set is not None else SkillSet(skills[k] for k in sorted(skills))
        )
        self.budget = budget
        self.root = root
        self.emit = emit
        self.policy = policy
        self.last: StageResult | None = None
        # the latest turns' results (/why, the ledger): a session of any length keeps these few
        self.history: deque[tuple[int, StageResult]] = deque(maxlen=HISTORY_KEPT)
        self._skills = skills
        self._files: dict[Path, str] | None = None  # real SKILL.md path -> name, on first use
        self._inodes: dict[tuple[int, int], str] = {}  # (device, inode) -> name, with _files
        self._shown: dict[str, str] = {}  # name -> the block text that went in (maybe a head)

    def __call__(
        self, sentence: str, history: list[Message], turn: int, touched: Sequence[str] = ()
    ) -> list[Message]:
        """This turn's injection (`touched`: paths the last turn read or wrote); a skill the
        user named to replace a held rival takes that rival's text out of the earlier message
        (history is revised in place)."""
        present = _present(history)
        result = evaluate(
            self.skill_set,
            sentence,
            budget=self.budget,
            root=self.root,
            touched=sorted(touched),
            in_context=present,
            policy=self.policy,
        )
        self.last = result
        self.history.append((turn, result))
        self._log(result, turn)
        self._shown.update((b.name, b.text) for b in result.blocks)
        for d in result.decisions:
            if d.loaded and d.replaces:
                self._retire(d.replaces, history)
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

    def _retire(self, name: str, history: list[Message]) -> None:
        """Take a replaced skill's block out of the messages that carried it."""
        skill = self.skill_set.by_name.get(name)
        block = self._shown.get(name) or (self.policy.render(skill).text if skill else "")
        for i, m in enumerate(history):
            if m.kind != KIND_SKILLS or name not in m.skills:
                continue
            rest = tuple(n for n in m.skills if n != name)
            text = m.content.replace(block, "", 1) if block and block in m.content else ""
            if not rest or not text:
                history[i] = replace(
                    m,
                    content=f"[skill {name} was replaced; see later turns]",
                    skills=rest,
                    protected=bool(rest),
                )
            else:
                history[i] = replace(m, content=text, skills=rest)
        self.emit(SkillReplaced(name))

    # -- activation: the model reads a skill (read_file skill:NAME, or its SKILL.md) -----------
    def update(self, skills: Mapping[str, Skill], skill_set: SkillSet | None = None) -> None:
        """New skills from a rediscovery (what is in context stays as it is)."""
        self.skill_set = (
            skill_set if skill_set is not None else SkillSet(skills[k] for k in sorted(skills))
        )
        self._skills, self._files = skills, None

    def dirs(self) -> Mapping[str, Path]:
        """Each loaded skill's directory (read_file may read inside them)."""
        return {name: s.dir for name, s in self._skills.items()}

    def skill_named(self, target: Path, st: os.stat_result | None = None) -> str | None:
        """The loaded skill whose SKILL.md this is, by its real path or, given its stat, by its
        inode (a hard link to a SKILL.md is that SKILL.md), or None."""
        if self._files is None:  # resolving thousands of paths is not worth it at start-up
            self._files = {_real(s.path): s.name for s in self._skills.values()}
            self._inodes = {k: s.name for s in self._skills.values() if (k := _inode(s.path))}
        name = self._files.get(_real(target))
        return name if name is not None or st is None else self._inodes.get(_key(st))

    def skill_in(self, directory: Path) -> str | None:
        """The loaded skill whose SKILL.md is in this directory, or None."""
        return self.skill_named(directory / SKILL_FILE)

    def activate(
        self, name: str, turn: int, history: Sequence[Message]
    ) -> tuple[bool, str, Message | None]:
        """The same gates, dedup and protection as a matched body: (loaded, note, message)."""
        skill = self.skill_set.by_name.get(name)
        if skill is None:
            known = ", ".join(sorted(self.skill_set.by_name)) or "none"
            return False, f"no skill named {name!r} is loaded (loaded: {known})", None
        present = _present(history)
        held = {
            s.domain_key: s.name
            for n in sorted(present, key=present.__getitem__)
            if (s := self.skill_set.by_name.get(n)) is not None
        }
        result = self.last if self.history and self.history[-1][0] == turn else None
        used = len(result.injected_text) if result else 0
        used += sum(len(b.text) for b in result.read) if result else 0
        loaded, reason, block = gate_read(
            skill, self.policy.render, present, held, self.budget - used
        )
        line = f"{name}  read by the model  → {'' if loaded else 'not loaded: '}{reason}"
        self.emit(SkillRead(turn, name, loaded, reason, line))
        if not loaded or block is None:
            return False, f"skill {name!r} not loaded: {reason}", None
        if result is not None:
            result.read.append(block)
        self._shown[name] = block.text
        text = READ_HEADER + "\n\n" + block.text
        message = Message("user", text, kind=KIND_SKILLS, protected=True, turn=turn, skills=(name,))
        note = f"mca put the skill {name!r} in the conversation (the next message): {reason}"
        return True, note, message

    def body_in_context(self, name: str, history: Sequence[Message]) -> str:
        """The body of a skill in context (its head may be all that fitted), to read on with
        read_file skill:NAME offset=N; a skill not in context is read whole first."""
        skill = self.skill_set.by_name.get(name)
        if skill is None:
            known = ", ".join(sorted(self.skill_set.by_name)) or "none"
            raise ToolError(f"no skill named {name!r} is loaded (loaded: {known})")
        if name not in _present(history):
            raise ToolError(
                f"skill {name!r} is not in the conversation: read_file skill:{name} (without"
                " offset or column) loads it first"
            )
        return skill.body

    def _log(self, result: StageResult, turn: int) -> None:
        for d in result.decisions:
            h = d.hit
            outcome = d.reason if d.loaded else f"not loaded: {d.reason}"
            reasons = [str(r) for r in h.reasons]
            self.emit(SkillHit(turn, d.name, h.score, reasons, f"{h.line()}  → {outcome}"))
            self.emit(SkillDecision(turn, d.name, d.loaded, d.reason, d.chars))
        injected = [b.name for b in result.blocks]
        self.emit(SkillsInjected(turn, len(result.injected_text), injected))
