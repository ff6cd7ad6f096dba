"""The watcher's shortcut gives the tree a full walk gives: random changes to a small workspace
(files, links, directories made, removed, renamed and swapped for one another, modes), and
after each batch the updated tree is compared with a fresh walk. Deltas of trees read back
whole; a long chain of them too."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from mca.fs.careful import sha256
from mca.workspace.trees import MAX_CHAIN, TreeStore
from mca.workspace.update import update
from mca.workspace.walk import Caps, Scanner
from mca.workspace.watch import Watcher

CAPS = Caps(file=1 << 20, total=1 << 30)
NAMES = ["a", "b", "c", "d"]


def _change(ws: Path, rng: random.Random) -> None:
    """One random change somewhere in the workspace."""
    parent = ws
    for _ in range(rng.randrange(3)):
        parent = parent / rng.choice(NAMES)
        if not parent.is_dir() or parent.is_symlink():
            parent = parent.parent
            break
    path = parent / rng.choice(NAMES)
    op = rng.choice(
        ["write", "append", "mkdir", "remove", "rename", "link", "chmod", "hardlink", "through"]
    )
    exists = os.path.lexists(path)
    if exists and (op == "remove" or (op in ("write", "mkdir", "link") and rng.random() < 0.5)):
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        exists = False
    if op == "write" and not exists:
        path.write_text(rng.choice(["x", "y", "xy"]))
    elif op == "append" and path.is_file() and not path.is_symlink():
        with path.open("a") as f:
            f.write("z")
    elif op == "mkdir" and not exists:
        path.mkdir()
        (path / rng.choice(NAMES)).write_text("inside")
    elif op == "link" and not exists:
        path.symlink_to(rng.choice(["a", "../outside", "/etc"]))
    elif op == "rename" and exists:
        target = ws / rng.choice(NAMES)
        if not os.path.lexists(target) and not str(target).startswith(str(path) + "/"):
            path.rename(target)
    elif op == "chmod" and exists and not path.is_symlink():
        # a folder keeps its owner's rights: one it cannot enter is refused to everyone but
        # root, the test's own changes included (the suite runs as an ordinary user too)
        modes = [0o700, 0o750, 0o755] if path.is_dir() else [0o600, 0o644, 0o755]
        path.chmod(rng.choice(modes))
    elif op == "hardlink" and path.is_file() and not path.is_symlink():
        place = rng.choice(["ws", "ignored", "outside"])  # another name, anywhere
        other = ws / rng.choice(NAMES)
        if place != "ws":
            where = ws / "ignored" if place == "ignored" else ws.parent / "outside"
            where.mkdir(exist_ok=True)
            other = where / f"{path.name}-{rng.randrange(100)}"
        if not os.path.lexists(other):
            os.link(path, other)
    elif op == "through":  # a write through a name outside the workspace (or an ignored one)
        names = [
            p for d in (ws / "ignored", ws.parent / "outside") if d.is_dir() for p in d.iterdir()
        ]
        if names:
            with rng.choice(sorted(names)).open("a") as f:
                f.write("t")


@pytest.mark.skipif(Watcher.open("/") is None, reason="no inotify on this machine")
@pytest.mark.parametrize("seed", range(6))
def test_the_shortcut_and_a_walk_agree(ws: Path, seed: int) -> None:
    rng = random.Random(seed)
    (ws / ".gitignore").write_text("ignored/\n")
    scanner = Scanner(ws, sha256, CAPS)
    watcher = Watcher.open(str(ws.resolve()))
    assert watcher is not None
    tree = scanner.scan(None, watcher.watch, watcher.watch_file)
    walks = 0
    for _ in range(40):
        for _ in range(rng.randrange(1, 4)):
            _change(ws, rng)
        changed = watcher.drain()
        assert changed is not None
        watched = set(watcher.dirs.values())
        updated = update(scanner, tree, changed, watcher.watch, watched, watcher.watch_file)
        walked = scanner.scan()
        if updated is None:  # a file gained a name: everything is walked, as the Walker does
            walks += 1
            watcher.reset()
            updated = scanner.scan(tree, watcher.watch, watcher.watch_file)
        assert updated.entries == walked.entries
        assert updated.groups() == walked.groups()
        tree = updated
    assert walks < 40
    watcher.close()


def test_a_gitignore_change_means_a_walk(ws: Path) -> None:
    scanner = Scanner(ws, sha256, CAPS)
    tree = scanner.scan()
    assert update(scanner, tree, {".gitignore"}, lambda d: None, set()) is None


def test_deltas_read_back_whole_and_a_chain_is_capped(tmp_path: Path, ws: Path) -> None:
    store = TreeStore(tmp_path / "store")
    store.ensure()
    scanner = Scanner(ws, store.put, CAPS)
    ids, trees = [], []
    for i in range(MAX_CHAIN + 3):
        (ws / f"f{i % 7}").write_text(str(i))
        if i % 5 == 0 and (ws / "f1").exists():
            (ws / "f1").unlink()
        tree = scanner.scan()
        ids.append(store.save_tree(tree))
        trees.append(tree.entries)
    fresh = TreeStore(tmp_path / "store")
    for tid, entries in zip(ids, trees, strict=True):
        assert fresh.load_tree(tid).entries == entries
        assert len(fresh.chain(tid)) <= MAX_CHAIN + 1
