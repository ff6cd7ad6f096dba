"""Typed events: each kind once, and the log records they make are the records of before."""

from __future__ import annotations

import json
from pathlib import Path

from mca import events
from mca.events import (
    Event,
    FileChanged,
    ModelSwitched,
    SessionResumed,
    SkillResourceLoaded,
    ToolCalled,
    ToolReturned,
)
from mca.state.log import SessionLog
from mca.text.diff import file_diff
from mca.ui import stream_events


def _kinds() -> list[str]:
    found = {**vars(events), **vars(stream_events)}.values()
    return [
        c.kind for c in found if isinstance(c, type) and issubclass(c, Event) and c is not Event
    ]


def test_every_kind_is_named_once() -> None:
    kinds = _kinds()
    assert len(kinds) == len(set(kinds)) and all(kinds)
    assert {"tool.call", "tool.result", "file.changed", "ledger", "undo"} <= set(kinds)


def test_records_keep_their_keys() -> None:
    assert ToolCalled("read_file", {"path": "a"}, id="call_1").to_json() == {
        "id": "call_1",  # a new field: the old ones keep their names
        "name": "read_file",
        "arguments": {"path": "a"},
    }
    assert ToolReturned("read_file", True, "x", "call_1").to_json()["id"] == "call_1"
    assert ToolCalled("x", {}, unreadable=True).to_json()["unreadable"] is True
    change = file_diff("a.txt", b"", b"x\n")
    assert FileChanged("a.txt", 2, change).to_json() == {
        "path": "a.txt",
        "bytes": 2,
        "change": change.to_json(),  # the diff as data; -p's stream adds it drawn ("diff")
        "asked": False,  # a new field: the old ones keep their names
    }
    assert ModelSwitched("m1 via openai", "m2").to_json() == {"from": "m1 via openai", "to": "m2"}
    assert SessionResumed("abc", 2).to_json() == {"from": "abc", "turns": 2, "forked_as": ""}
    assert SkillResourceLoaded("guide", "/r.md", "read_file", 7).to_json()["bytes"] == 7


def test_the_log_writes_kind_and_fields(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = SessionLog(path, secrets=["sk-secret-value-123"])
    log.event(FileChanged("a.txt", 3, file_diff("a.txt", None, b"sk-secret-value-123")))
    log.close()
    record = json.loads(path.read_text())
    assert record["event"] == "file.changed" and record["bytes"] == 3
    assert "sk-secret-value-123" not in path.read_text()
    assert log.events[0]["path"] == "a.txt"
