"""The store on disk: small blobs in packs and large ones alone, both read back checked;
pruning keeps the newest sessions' records and what they refer to, and nothing else; a
damaged record or tree is reported, never acted on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mca.checkpoints.packs import PACK_MAX_BLOB
from mca.checkpoints.scan import FILE, Entry, Tree
from mca.checkpoints.store import CheckpointStore
from mca.errors import UndoError


def _store(tmp_path: Path) -> CheckpointStore:
    store = CheckpointStore(tmp_path / "store")
    store.ensure()
    return store


def _record(store: CheckpointStore, stem: str, blob: str) -> None:
    tree = Tree({"f": Entry(FILE, 0o644, 1, blob)})
    tid = store.save_tree(tree)
    record = {"session": stem.split("-")[1], "turn": 1, "kind": "turn", "undone": False}
    store.save_record(stem, record | {"before": tid, "after": tid, "conversation": None})


def test_small_blobs_are_packed_large_ones_alone(tmp_path: Path) -> None:
    store = _store(tmp_path)
    small, large = b"s" * 10, b"L" * (PACK_MAX_BLOB + 1)
    names = [store.put(small), store.put(large)]
    store.packs.flush()
    again = CheckpointStore(tmp_path / "store")
    assert [again.blob(n, 1 << 30) for n in names] == [small, large]
    assert len(list((tmp_path / "store" / "packs").glob("*.pack"))) == 1
    assert len(list((tmp_path / "store" / "objects").iterdir())) == 1


def test_prune_keeps_the_newest_sessions_and_what_they_refer_to(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for i in range(4):
        _record(store, f"2026010{i}T000000-s{i}-0001", store.put(f"content {i}".encode()))
    store.prune(2)
    records, _ = store.records()
    assert [stem for stem, _ in records] == ["20260102T000000-s2-0001", "20260103T000000-s3-0001"]
    again = CheckpointStore(tmp_path / "store")
    for _, record in records:
        tree = again.load_tree(record["before"])
        assert again.blob(tree.entries["f"].blob, 100).startswith(b"content")
    packs = list((tmp_path / "store" / "packs").glob("*.pack"))
    assert len(packs) == 2  # each record's pack; the two older ones went


def test_damaged_records_and_trees_are_reported(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _record(store, "20260101T000000-s1-0001", store.put(b"x"))
    (tmp_path / "store" / "records" / "20260101T000000-s1-0002.json").write_text("{bad")
    evil = {"session": "s1", "turn": 3, "kind": "turn", "before": "../../etc/passwd"}
    (tmp_path / "store" / "records" / "20260101T000000-s1-0003.json").write_text(json.dumps(evil))
    records, problems = store.records()
    assert len(records) == 1 and len(problems) == 2
    tree = next(iter((tmp_path / "store" / "trees").iterdir()))
    tree.write_text(tree.read_text().replace('"f"', '"../f"'))
    with pytest.raises(UndoError, match="unreadable"):
        CheckpointStore(tmp_path / "store").load_tree(tree.name[:-5])
