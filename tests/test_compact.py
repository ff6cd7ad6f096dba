"""Compaction: older turns summarised, protected skill bodies kept, /compact."""

from __future__ import annotations

import shutil
from pathlib import Path

from mca.models.mock import MockModel
from mca.types import KIND_SKILLS, KIND_SUMMARY
from tests.conftest import REPO
from tests.helpers import lab_session


def test_compaction_keeps_the_protected_skill_and_the_conversation_works(ws: Path) -> None:
    shutil.copytree(REPO / "fixtures/workspace", ws, dirs_exist_ok=True)
    s = lab_session(ws, MockModel(), MCA_CONTEXT_WINDOW="4000", MOCK="1")
    s.run_turn("fix the divide-by-zero problem in src/calc.js")
    for i in range(8):
        s.run_turn(f"read src/calc.js please ({i})")
    kinds = [m.kind for m in s.agent.messages]
    assert KIND_SUMMARY in kinds
    skills = [m for m in s.agent.messages if m.kind == KIND_SKILLS]
    assert skills and "must throw" in skills[0].content and skills[0].protected
    compacted = [t for t in s.ledger.turns if t.compaction]
    compaction = compacted[0].compaction if compacted else None
    assert compaction and compaction["protected_kept"] == ["calc-conventions"]
    assert compaction["after_tokens"] < compaction["before_tokens"]
    result = s.run_turn("read README.md")
    assert "calc sample" in result.answer


def test_compact_command(ws: Path) -> None:
    s = lab_session(ws, MockModel(), MOCK="1")
    assert "nothing to compact" in s.compact()
    for i in range(4):
        s.run_turn(f"list the files {i}")
    assert s.compact().startswith("compacted:")
