"""Shared fixtures. Every test runs with no API keys, no base URLs and a private MCA_HOME."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mca.events import drop
from mca.session import HeadlessUI
from mca.tools.base import Approvals, ToolEnv, TurnState
from mca.tools.snapshots import SnapshotStore

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "skills"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No real network is reachable from a test: keys and base URLs are stripped."""
    for key in list(os.environ):
        if key.endswith("_API_KEY") or key.startswith("MCA_") or key in ("MOCK", "SELFTEST"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MCA_HOME", str(tmp_path_factory.mktemp("mca_home")))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace directory."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def env(ws: Path) -> Iterator[ToolEnv]:
    """The tools' environment on the workspace: every command approved, edits applied,
    protected paths refused, events dropped."""
    store = SnapshotStore(ws, ws.parent / "store", "test01", "20260101T000000")
    yield ToolEnv(ws, store, Approvals(HeadlessUI()), drop)


@pytest.fixture
def turn() -> TurnState:
    """Turn 1's state, for tools called directly."""
    return TurnState(1)
