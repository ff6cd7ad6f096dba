"""The plan as text: one checklist line per step (the model and the person see the same)."""

from __future__ import annotations

__all__ = ["PLAN_MARKS", "render_plan"]

PLAN_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


def render_plan(plan: list[dict[str, str]]) -> str:
    """The plan as checklist lines."""
    return "\n".join(f"{PLAN_MARKS[s['status']]} {s['step']}" for s in plan)
