"""Fixtures the sandbox's tests share."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def world_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh folder for a world, with no other test's folder beside it, removed after the
    test. Landlock's read rules grant each entry beside the way to a secret: in pytest's own
    folder a world had every earlier test's folder beside it (thousands by the end of a run:
    140 ms and more a world, the run's largest cost)."""
    parent = tmp_path_factory.getbasetemp().parent / "worlds"
    parent.mkdir(exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="w", dir=parent))
    yield root
    subprocess.run(["rm", "-rf", "--", str(root)], check=False)
