"""Hostile repositories: every scenario runs mca as a person would, then the oracle checks that
nothing outside the workspace changed and that no planted key was written, printed or sent."""

from __future__ import annotations

import faulthandler
from pathlib import Path

import pytest

from tests.security import (
    scenarios_gaps,  # noqa: F401  (registers its scenarios)
    scenarios_io,  # noqa: F401  (registers its scenarios)
    scenarios_keys,  # noqa: F401  (registers its scenarios)
)
from tests.security.scenarios import SCENARIOS
from tests.security.world import World

HANG_LIMIT = 120  # seconds: a hang ends the run with a traceback instead of stalling CI


def test_there_are_enough_scenarios() -> None:
    assert len(SCENARIOS) >= 60, len(SCENARIOS)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario(name: str, tmp_path: Path) -> None:
    world = World(tmp_path)
    faulthandler.dump_traceback_later(HANG_LIMIT, exit=True)
    try:
        SCENARIOS[name](world)
    finally:
        faulthandler.cancel_dump_traceback_later()
    world.check()
