"""Which paths the read grants cover: everything but the denied ones, the same as pathlib's
is_relative_to says (the walk compares paths as strings, for speed)."""

from __future__ import annotations

from pathlib import Path

from mca.sandbox.rules import _holds, _under, read_grants


def test_string_comparison_agrees_with_pathlib() -> None:
    paths = [Path(p) for p in ("/", "/a", "/ab", "/a/b", "/a/b/c", "/b", "/a/bc")]
    for p in paths:
        for r in paths:
            assert _under(p, [r]) == (p == r or p.is_relative_to(r)), (p, r)
            assert _holds(p, [r]) == (r != p and r.is_relative_to(p)), (p, r)


def test_the_grants_cover_everything_but_the_denied(tmp_path: Path) -> None:
    for rel in ("keep/x", "secret/key", "mixed/ok", "mixed/secret/key", "mixedup/y"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    grants = read_grants([tmp_path / "secret", tmp_path / "mixed" / "secret"], top=tmp_path)
    whole = {p.relative_to(tmp_path).as_posix() for p in grants.whole}
    listed = {p.relative_to(tmp_path).as_posix() for p in grants.list_only}
    assert whole == {"keep", "mixed/ok", "mixedup"}
    assert listed == {".", "mixed"}
