"""Which paths the read grants cover: everything but the denied ones, the same as pathlib's
is_relative_to says (the walk looks paths up as strings in sets, for speed)."""

from __future__ import annotations

from pathlib import Path

from mca.sandbox.rules import _Denied, read_grants


def test_the_lookups_agree_with_pathlib() -> None:
    paths = [Path(p) for p in ("/", "/a", "/ab", "/a/b", "/a/b/c", "/b", "/a/bc")]
    for p in paths:
        for r in paths:
            denied = _Denied([r])
            assert denied.under(str(p)) == (p == r or p.is_relative_to(r)), (p, r)
            assert denied.holds(str(p)) == (r != p and r.is_relative_to(p)), (p, r)
    several = _Denied([Path("/a/b"), Path("/c")])
    assert several.under("/a/b/x") and several.under("/c") and not several.under("/a")
    assert several.holds("/a") and several.holds("/") and not several.holds("/a/b")


def test_the_grants_cover_everything_but_the_denied(tmp_path: Path) -> None:
    for rel in ("keep/x", "secret/key", "mixed/ok", "mixed/secret/key", "mixedup/y"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    grants = read_grants([tmp_path / "secret", tmp_path / "mixed" / "secret"], top=tmp_path)
    whole = {p.relative_to(tmp_path).as_posix() for p in grants.whole}
    listed = {p.relative_to(tmp_path).as_posix() for p in grants.list_only}
    assert whole == {"keep", "mixed/ok", "mixedup"}
    assert listed == {".", "mixed"}


def _oracle(deny: list[Path], top: Path) -> tuple[set[Path], set[Path]]:
    """The walk as it was written first (each path compared with each secret), the oracle."""
    import os

    def under(p: Path, roots: set[Path]) -> bool:
        return any(p == r or p.is_relative_to(r) for r in roots)

    def holds(p: Path, roots: set[Path]) -> bool:
        return any(r != p and r.is_relative_to(p) for r in roots)

    denied = {p for d in deny for p in (d.absolute(), Path(os.path.realpath(d)))}
    whole: set[Path] = set()
    listed: set[Path] = set()

    def walk(d: Path, seen: set[Path]) -> None:
        listed.add(d)
        seen.add(d)
        for e in sorted(os.scandir(d), key=lambda e: e.name):
            path, real = Path(e.path), Path(os.path.realpath(e.path))
            if under(path, denied) or under(real, denied):
                continue
            if not holds(real, denied) and not holds(path, denied):
                whole.add(real if e.is_symlink() else path)
            elif not e.is_symlink() and e.is_dir(follow_symlinks=False) and real not in seen:
                walk(path, seen)

    if not under(top, denied):
        walk(top, set())
    return whole, listed


def test_the_walk_agrees_with_the_first_one_on_random_trees(tmp_path: Path) -> None:
    import random

    for seed in range(30):
        rng = random.Random(seed)
        top = tmp_path / f"t{seed}"
        dirs = [top]
        top.mkdir()
        for i in range(25):
            parent = rng.choice(dirs)
            p = parent / f"{rng.choice('abc')}{i}"
            kind = rng.random()
            if kind < 0.4:
                p.mkdir()
                dirs.append(p)
            elif kind < 0.8:
                p.write_text("x")
            else:  # a link to somewhere in the tree (a secret, maybe), or to nowhere
                p.symlink_to(rng.choice([*dirs, top / "missing"]))
        everything = [p for p in top.rglob("*")]
        deny = rng.sample(everything, min(3, len(everything)))
        grants = read_grants(deny, top=top)
        assert (set(grants.whole), set(grants.list_only)) == _oracle(deny, top), seed
