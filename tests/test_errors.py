"""How an error is told: one line on stderr, the same from the CLI and from a one-shot turn."""

from __future__ import annotations

from mca.errors import ConfigError, error_line


def test_an_error_is_one_visible_line() -> None:
    line = error_line(ConfigError("bad value \x1b[2J for MCA_MODEL"))
    assert line == "mca: error: bad value ^[[2J for MCA_MODEL\n"
