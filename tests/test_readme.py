"""The README's exact figures are what the commands print today (`make figures` rewrites them)."""

from __future__ import annotations

from bench.figures import BLOCKS, README, blocks


def test_every_figure_block_is_current() -> None:
    found = blocks(README.read_text(encoding="utf-8"))
    assert set(found) == set(BLOCKS), found.keys()
    for name, make in BLOCKS.items():
        assert found[name] == make(), f"README block {name!r} is stale: run `make figures`"
