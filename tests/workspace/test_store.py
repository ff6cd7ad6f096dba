"""The store on disk: small blobs in packs and large ones alone, both read back checked;
pruning keeps the newest sessions' records and what they refer to, and nothing else; a
damaged record or tree is reported, never acted on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mca.errors import UndoError
from mca.workspace.packs import PACK_MAX_BLOB
from mca.workspace.records import Record, Trees
from mca.workspace.store import WorkspaceStore
from mca.workspace.trees import TreeStore
from mca.workspace.walk import FILE, OFF, Entry, Tree


def _store(tmp_path: Path) -> WorkspaceStore:
    (tmp_path / "ws").mkdir(exist_ok=True)
    store = WorkspaceStore(tmp_path / "ws", tmp_path / "store", "s9", "20260109T000000", OFF)
    store.walker.trees.ensure()
    return store


def _record(store: WorkspaceStore, stem: str, blob: str) -> None:
    trees = store.walker.trees
    tid = trees.save_tree(Tree({"f": Entry(FILE, 0o644, 1, blob)}))
    trees.flush()
    store.journal.save_trees(Record(stem, stem.split("-")[1], 1, trees=Trees(tid, tid)))


def test_small_blobs_are_packed_large_ones_alone(tmp_path: Path) -> None:
    trees = _store(tmp_path).walker.trees
    small, large = b"s" * 10, b"L" * (PACK_MAX_BLOB + 1)
    names = [trees.put(small), trees.put(large)]
    trees.flush()
    again = TreeStore(tmp_path / "store" / "checkpoints")
    assert [again.blob(n, 1 << 30) for n in names] == [small, large]
    assert len(list((tmp_path / "store" / "checkpoints" / "packs").glob("*.pack"))) == 1
    assert len(list((tmp_path / "store" / "checkpoints" / "objects").iterdir())) == 1


def test_prune_keeps_the_newest_sessions_and_what_they_refer_to(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for i in range(4):
        _record(
            store, f"2026010{i}T000000-s{i}-0001", store.walker.trees.put(f"content {i}".encode())
        )
    store.prune(2)
    records, _ = store.journal.read()
    assert [r.stem for r in records] == ["20260102T000000-s2-0001", "20260103T000000-s3-0001"]
    again = TreeStore(tmp_path / "store" / "checkpoints")
    for r in records:
        assert r.trees is not None
        tree = again.load_tree(r.trees.before)
        assert again.blob(tree.entries["f"].blob, 100).startswith(b"content")
    packs = list((tmp_path / "store" / "checkpoints" / "packs").glob("*.pack"))
    assert len(packs) == 2  # each record's pack; the two older ones went


def test_damaged_records_and_trees_are_reported(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _record(store, "20260101T000000-s1-0001", store.walker.trees.put(b"x"))
    where = tmp_path / "store" / "checkpoints" / "records"
    (where / "20260101T000000-s1-0002.json").write_text("{bad")
    evil = {"session": "s1", "turn": 3, "kind": "turn", "before": "../../etc/passwd"}
    (where / "20260101T000000-s1-0003.json").write_text(json.dumps(evil))
    records, problems = store.journal.read()
    assert len(records) == 1 and len(problems) == 2
    tree = next(iter((tmp_path / "store" / "checkpoints" / "trees").iterdir()))
    tree.write_text(tree.read_text().replace('"f"', '"../f"'))
    with pytest.raises(UndoError, match="unreadable"):
        TreeStore(tmp_path / "store" / "checkpoints").load_tree(tree.name[:-5])
