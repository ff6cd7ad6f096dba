"""Helpers to write skills on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

MakeSkill = Callable[..., Path]


def skill_text(
    name: str | None = "demo",
    description: str | None = "Use when testing.",
    body: str = "Body.\n",
    **extra: str,
) -> str:
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f'description: "{description}"')
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in extra.items()]
    lines.append("---")
    return "\n".join(lines) + "\n" + body


@pytest.fixture
def make_skill() -> MakeSkill:
    def make(root: Path, dirname: str, text: str | None = None, **kw: str) -> Path:
        d = root / dirname
        d.mkdir(parents=True, exist_ok=True)
        path = d / "SKILL.md"
        path.write_text(text if text is not None else skill_text(name=dirname, **kw))
        return path

    return make
