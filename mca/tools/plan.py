"""update_plan: the model's step list, shown to the person in the REPL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mca.errors import ToolError
from mca.events import PlanUpdated
from mca.text.plans import render_plan
from mca.tools.base import ToolEnv, TurnState

STATUSES = ("pending", "in_progress", "completed")


def update_plan(env: ToolEnv, turn: TurnState, args: Mapping[str, Any]) -> str:
    """Replace the plan with a new list of steps."""
    steps = args.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ToolError("argument 'steps' must be a non-empty list of {step, status}")
    plan: list[dict[str, str]] = []
    for i, item in enumerate(steps, 1):
        if not isinstance(item, dict):
            raise ToolError(f"step {i} must be an object with 'step' and 'status'")
        text, status = item.get("step"), item.get("status", "pending")
        if not isinstance(text, str) or not text.strip():
            raise ToolError(f"step {i} needs a non-empty 'step' text")
        if status not in STATUSES:
            raise ToolError(f"step {i}: status must be one of {', '.join(STATUSES)}")
        plan.append({"step": text.strip(), "status": status})
    if sum(s["status"] == "in_progress" for s in plan) > 1:
        raise ToolError("at most one step can be in_progress")
    turn.plan[:] = plan
    env.emit(PlanUpdated(plan))
    return "plan updated:\n" + render_plan(plan)
