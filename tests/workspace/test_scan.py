"""The walk: what a checkpoint records, what it leaves out, and what it reads again."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from mca.fs.careful import sha256
from mca.workspace.walk import DIR, FILE, LINK, OVER, Budget, Caps, Scanner, Tree

BIG = Caps(file=1 << 20, total=1 << 30)


class Blobs:
    """Blobs in memory; counts what was handed over (read) by the walk."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.puts = 0

    def put(self, data: bytes) -> str:
        self.puts += 1
        self.data[sha256(data)] = data
        return sha256(data)


def scan(ws: Path, caps: Caps = BIG, previous: Tree | None = None) -> tuple[Tree, Blobs]:
    blobs = Blobs()
    return Scanner(ws, blobs.put, caps).scan(previous), blobs


def test_files_links_dirs_and_what_is_left_out(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("a = 1\n")
    (ws / "src" / "a.py").chmod(0o751)
    (ws / "out").symlink_to(tmp_path)  # a link to a directory outside: never entered
    (ws / "to-secret").symlink_to(tmp_path / "outside.txt")
    os.mkfifo(ws / "pipe")  # never opened (it would block)
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref")
    (ws / "back\\slash").write_text("x")
    tree, blobs = scan(ws)
    e = tree.entries
    assert e["src"].kind == DIR and e["src/a.py"].kind == FILE and e["src/a.py"].mode == 0o751
    assert blobs.data[e["src/a.py"].blob] == b"a = 1\n"
    assert e["out"].kind == LINK and e["out"].target == str(tmp_path)
    assert e["to-secret"].kind == LINK and b"secret" not in b"".join(blobs.data.values())
    assert tree.special == ["pipe"] and "pipe" not in e
    assert not any(p.startswith(".git") for p in e)
    assert "back\\slash" not in e and tree.unreadable


def test_caps_per_file_and_in_total(ws: Path) -> None:
    for name, size in (("a", 10), ("b", 600), ("c", 300), ("d", 200)):
        (ws / name).write_bytes(b"x" * size)
    tree, blobs = scan(ws, Caps(file=500, total=400))
    kinds = {p: e.kind for p, e in tree.entries.items()}
    assert kinds == {"a": FILE, "b": OVER, "c": FILE, "d": OVER}  # in name order
    assert tree.over() == ["b", "d"] and all(len(d) <= 500 for d in blobs.data.values())


def test_gitignore_with_odd_patterns(ws: Path) -> None:
    (ws / ".gitignore").write_text(
        "*.log\n!keep.log\nbuild/\n[unclosed\n\\#hash\n**/deep/**\n/rooted.txt\n  \n#c\n"
    )
    for rel in (
        "a.log", "keep.log", "build/x.o", "#hash", "[unclosed", "x/deep/y/z",
        "rooted.txt", "sub/rooted.txt", "sub/build", "ok.txt",
    ):  # fmt: skip
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(rel)
    (ws / "sub" / ".gitignore").write_text("*.txt\n")
    tree, _ = scan(ws)
    files = sorted(p for p, e in tree.entries.items() if e.kind == FILE)
    assert files == [".gitignore", "[unclosed", "keep.log", "ok.txt", "sub/.gitignore", "sub/build"]


def test_unchanged_files_are_not_read_again(ws: Path) -> None:
    for i in range(20):
        (ws / f"f{i}.txt").write_text(str(i))
    old = 1_000_000_000 * 1_600_000_000  # long ago: not racy
    for p in ws.iterdir():
        os.utime(p, ns=(old, old))
    first, blobs = scan(ws)
    (ws / "f3.txt").write_text("changed")
    again, more = scan(ws, previous=first)
    assert blobs.puts == 20 and more.puts == 1
    assert again.entries["f3.txt"].blob == sha256(b"changed")
    assert again.entries["f4.txt"] == first.entries["f4.txt"]


def test_a_deep_tree_does_not_exhaust_the_stack(ws: Path) -> None:
    path = ws
    for _ in range(1200):  # deeper than Python's recursion limit
        path = path / "d"
        os.mkdir(path)
    (path / "leaf").write_text("x")
    tree, _ = scan(ws, replace(BIG, walk=Budget(depth=2000)))
    assert sum(1 for p in tree.entries if p.endswith("leaf")) == 1 and tree.uncovered == {}


def test_the_walk_stops_at_its_depth_and_says_where(ws: Path) -> None:
    path = ws
    for i in range(80):
        path = path / "d"
        os.mkdir(path)
        (path / f"f{i}").write_text("x")
    tree, _ = scan(ws)
    cut = "/".join(["d"] * Budget().depth)
    assert tree.uncovered == {cut: f"deeper than {Budget().depth} levels"}
    assert tree.entries[cut].kind == DIR and not any(p.startswith(cut + "/") for p in tree.entries)
    assert f"{cut[:-1]}f{Budget().depth - 2}" in tree.entries  # everything above it is covered


def test_the_walk_stops_at_its_entries_and_says_where(ws: Path) -> None:
    for d in "abc":
        (ws / d).mkdir()
        for i in range(10):
            (ws / d / f"f{i}").write_text(d)
    tree, _ = scan(ws, replace(BIG, walk=Budget(entries=15)))
    assert len(tree.entries) == 15  # a, its ten files, b, c, and two of b's files
    assert set(tree.uncovered) == {"b", "c"} and "entries" in tree.uncovered["b"]
    assert sorted(p for p in tree.entries if p.startswith("b/")) == ["b/f0", "b/f1"]


def test_a_file_with_two_names_is_recorded_as_one(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "calc.js").write_text("x\n")
    os.link(ws / "src" / "calc.js", ws / "notes.lnk")
    (ws / "alone.txt").write_text("y\n")
    os.link(ws / "alone.txt", ws.parent / "outside.lnk")  # its other name: not in the tree
    tree, _ = scan(ws)
    assert tree.groups() == [["alone.txt"], ["notes.lnk", "src/calc.js"]]
