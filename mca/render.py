"""Terminal text for tool calls, results, plans, undo reports and registries. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mca.agent import describe_call
from mca.tools.base import Tool
from mca.tools.plan import render_plan
from mca.tools.snapshots import UndoReport

MAX_RESULT_PREVIEW = 6


def tool_call_line(name: str, arguments: Mapping[str, Any]) -> str:
    """'→ read_file(path=src/calc.js)'."""
    return f"→ {describe_call(name, arguments)}"


def tool_result_lines(name: str, ok: bool, result: str) -> str:
    """A short preview of a tool result."""
    lines = result.splitlines() or [""]
    mark = "✓" if ok else "✗"
    shown = lines[:MAX_RESULT_PREVIEW]
    extra = len(lines) - len(shown)
    body = "\n".join(f"  {mark if i == 0 else ' '} {line}" for i, line in enumerate(shown))
    return body + (f"\n    … {extra} more lines" if extra > 0 else "")


def plan_lines(plan: list[dict[str, str]]) -> str:
    """The plan, indented."""
    return "plan:\n" + "\n".join("  " + line for line in render_plan(plan).splitlines())


def undo_lines(report: UndoReport) -> str:
    """What /undo did."""
    out = [f"undid {report.turn_label}:"]
    out += [f"  restored {p}" for p in report.restored]
    out += [f"  removed  {p} (the turn created it)" for p in report.removed]
    out += [f"  already as before: {p}" for p in report.unchanged]
    out += [
        f"  left alone {p}: it changed since mca wrote it (use /undo --force to restore anyway)"
        for p in report.skipped
    ]
    return "\n".join(out)


def snapshot_lines(manifests: Sequence[Mapping[str, Any]]) -> str:
    """The turns /undo can still revert, newest first."""
    if not manifests:
        return "no undoable turns"
    out = ["undoable turns, newest first (/undo reverts the top one):"]
    for m in manifests:
        files = ", ".join(
            f["path"] + ("" if f["existed"] else " (new)")
            for f in m["files"]
            if not f.get("restored")
        )
        out.append(f"  session {m['session']} turn {m['turn']}: {files}")
    return "\n".join(out)


def tools_text(tools: Sequence[Tool]) -> str:
    """The registry for people."""
    out = []
    for i, t in enumerate(tools, 1):
        params = ", ".join(
            p + ("" if p in t.parameters.get("required", []) else "?")
            for p in t.parameters.get("properties", {})
        )
        out.append(f"{i}. {t.name}({params})\n   {t.description}")
    return "\n".join(out)


def tools_json(tools: Sequence[Tool]) -> str:
    """The registry for programs."""
    return json.dumps(
        [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools],
        indent=2,
    )
