"""A turn's ledger built: one row per piece of the request the turn last sent, priced by the
session's estimator, with what the pre-turn stage decided (why each skill body went in, or did
not), and the estimator calibrated with what the provider reported. The ledger itself is pure
data (mca/ledger.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mca.ledger import Calibration, Row, TurnLedger, carried, message_text, tools_text
from mca.models.options import ModelOptions
from mca.skills.inject import Block
from mca.skills.stage import StageResult
from mca.text.counts import plural
from mca.tokens import Estimator
from mca.turn import TurnResult
from mca.types import (
    KIND_REFERENCE,
    KIND_SHELL,
    KIND_SKILLS,
    KIND_SUMMARY,
    Message,
    Reasoning,
    Request,
)

__all__ = ["build_ledger", "calibration_for", "turn_ledger"]


class _Builder:
    def __init__(self, est: Estimator) -> None:
        self.est = est
        self.rows: list[Row] = []

    def add(self, label: str, kind: str, text: str, reason: str = "") -> None:
        self.rows.append(Row(label, kind, len(text), self.est.count(text), reason))

    def add_many(self, label: str, kind: str, texts: Sequence[str]) -> None:
        if texts:
            chars = sum(len(t) for t in texts)
            self.rows.append(Row(label, kind, chars, sum(self.est.count(t) for t in texts)))

    def skills(self, m: Message, stage: StageResult | None) -> None:
        blocks = {b.name: b for b in stage.blocks} if stage else {}
        reasons = {d.name: d for d in stage.decisions} if stage else {}
        rest = m.content
        for name in m.skills:
            block: Block | None = blocks.get(name)
            if block is None:
                continue
            body = block.body
            hit = reasons[name].hit.line().split("  ", 2)[-1] if name in reasons else ""
            self.add(f"skill body: {name}", "stage2", body, f"{hit} → {block.partial or 'loaded'}")
            rest = rest.replace(body, "", 1)
            for cmd in block.attachments:
                self.add(f"attachment: {cmd}", "stage3", cmd + "\n", f"script of {name}")
                rest = rest.replace(cmd + "\n", "", 1)
        self.add("skill tags, header and resource names", "stage2", rest)

    def messages(self, msgs: Sequence[Message], turn: int, stage: StageResult | None) -> None:
        """Rows for the conversation: skills, references, history, the sentence, tool traffic."""
        chats = [i for i, m in enumerate(msgs) if m.role == "user" and m.kind == "chat"]
        sentence_at = max((i for i in chats if msgs[i].turn == turn), default=len(msgs))
        history: list[str] = []
        for i, m in enumerate(msgs[: sentence_at + 1]):
            text = message_text(m)
            if m.kind == KIND_SKILLS and m.turn == turn:
                self.skills(m, stage)
            elif m.kind == KIND_SKILLS:
                label = f"skills from turn {m.turn}: {', '.join(m.skills)}"
                self.add(label, "stage2", text, "protected, already in context")
            elif m.kind == KIND_REFERENCE and m.turn == turn:
                refs = ", ".join(p for p, _ in (stage.references if stage else []))
                self.add(f"@references: {refs}", "reference", text)
            elif m.kind == KIND_SUMMARY:
                self.add("compaction summary", "history", text)
            elif m.kind == KIND_SHELL and m.turn == turn:
                self.add("!command output you added", "reference", text)
            elif i == sentence_at:
                self.add("your sentence", "sentence", text)
            else:
                history.append(text)
        self.add_many(
            f"conversation history ({plural(len(history), 'message')})", "history", history
        )
        this_turn = []
        partial = {b.name: b.partial for b in stage.read if b.partial} if stage else {}
        for m in msgs[sentence_at + 1 :]:
            if m.kind == KIND_SKILLS:  # a skill the model read this turn: an activation
                label = f"skill read by the model: {', '.join(m.skills)}"
                why = "; ".join(
                    ["read_file → gates passed, protected"]
                    + [partial[n] for n in m.skills if n in partial]
                )
                self.add(label, "stage2", message_text(m), why)
            else:
                this_turn.append(message_text(m))
        self.add_many("this turn's tool calls and results", "tools-turn", this_turn)
        self.reasoning(carried(msgs))

    def reasoning(self, pieces: Sequence[Reasoning]) -> None:
        """The reasoning sent back: the provider's count of it where it said one."""
        if pieces:
            tokens = sum(r.tokens or self.est.count(r.text) for r in pieces)
            label = f"reasoning sent back ({plural(len(pieces), 'piece')})"
            chars = sum(len(r.text) for r in pieces)
            self.rows.append(Row(label, "reasoning", chars, tokens, "the model's, this turn"))

    def considered(self, stage: StageResult | None) -> None:
        """Zero-size rows that say why nothing, or why not this skill, went in."""
        fresh = [
            r for r in self.rows if r.kind == "stage2" and not r.label.startswith("skills from")
        ]
        if not any(r.chars for r in fresh):
            matched = stage is not None and bool(stage.hits)
            why = "none passed the gates" if matched else "no skill matched this sentence"
            self.rows.append(Row("skill bodies (stage two): none injected", "stage2", 0, 0, why))
        for d in stage.decisions if stage else []:
            if not d.loaded:
                self.rows.append(Row(f"skill not loaded: {d.name}", "considered", 0, 0, d.reason))


def build_ledger(
    turn: int,
    request: Request,
    system_pieces: Sequence[tuple[str, str]],
    est: Estimator,
    window: int,
    stage: StageResult | None = None,
) -> TurnLedger:
    """Rows for every piece of the request, in the order they were sent."""
    b = _Builder(est)
    for label, text in system_pieces:
        b.add(label, "stage1" if label.startswith("skill catalog") else "system", text)
    b.add(f"tool schemas ({len(request.tools)} tools)", "tools", tools_text(request.tools))
    b.messages(request.messages, turn, stage)
    b.considered(stage)
    return TurnLedger(turn, b.rows, window, est.encoding)


def calibration_for(model: ModelOptions, home: Path) -> Calibration:
    """The calibration of this model at this base URL; a scripted mock's usage is the script's
    own numbers, kept apart from the mock's (and from any other script's)."""
    where = f"script {model.mock_script}" if model.mock_script else model.base_url
    return Calibration(home, model.model, where)


def turn_ledger(
    result: TurnResult,
    system_pieces: Sequence[tuple[str, str]],
    est: Estimator,
    model: ModelOptions,
    home: Path,
    stage: StageResult | None = None,
) -> TurnLedger:
    """A finished turn's ledger, from the last request it sent, with the model's calibration
    updated by the usage the provider reported for it."""
    entry = build_ledger(
        result.turn, result.requests[-1], system_pieces, est, model.context_window, stage
    )
    entry.model_calls = len(result.requests)
    calibration = calibration_for(model, home)
    usage = result.request_usage[-1] if result.request_usage else None
    if usage is not None and usage.prompt_tokens:
        entry.provider_prompt_tokens = usage.prompt_tokens
        entry.cached_tokens = usage.cached_tokens or None
        entry.cache_write_tokens = usage.cache_write_tokens or None
        entry.calibration, entry.calibration_used = calibration.update(
            entry.tokens, usage.prompt_tokens
        )
    else:
        entry.calibration = calibration.factor()
    entry.reasoning_tokens = result.usage.reasoning_tokens or None
    return entry
