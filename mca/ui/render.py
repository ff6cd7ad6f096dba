"""Terminal text for tool calls, results, plans, undo reports and registries. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mca.text.counts import plural
from mca.text.plans import render_plan
from mca.text.sanitize import command_block, exact, exact_line
from mca.text.wrap import wrap_words
from mca.ui.diff_view import draw_diff

if TYPE_CHECKING:  # this module is on the path to the first prompt: import nothing heavy
    from mca.events import Event
    from mca.ledger import TurnLedger
    from mca.tools.base import Tool
    from mca.workspace.report import Rewound, Undoable, UndoReport

__all__ = [
    "MAX_RESULT_PREVIEW",
    "THINKING_SHOWN",
    "describe_call",
    "fold_thinking",
    "ledger_summary",
    "ledger_table",
    "plan_lines",
    "progress_line",
    "rewind_lines",
    "snapshot_lines",
    "tool_call_line",
    "tool_result_lines",
    "tools_json",
    "tools_text",
    "undo_lines",
    "wrap_words",
]

MAX_RESULT_PREVIEW = 6
THINKING_SHOWN = 3  # lines of a reply's thinking shown folded (/thinking shows them all)


def describe_call(call_name: str, arguments: Mapping[str, Any]) -> str:
    """One line for a tool call: name(arg=value, ...), long values cut, every invisible or
    control character shown as its code."""
    parts = []
    for k, v in arguments.items():
        text = exact_line(v if isinstance(v, str) else json.dumps(v))
        parts.append(f"{exact_line(str(k))}={text[:60] + '…' if len(text) > 60 else text}")
    return f"{exact_line(call_name)}({', '.join(parts)})"


def progress_line(event: Event) -> str:
    """The short line a person sees for a session event, or ''."""
    # imported at the first event, after the prompt: 34 dataclasses take ~13 ms to define
    from mca.events import (
        COMPACT_ASKED,
        CommandInterrupted,
        CommandStarted,
        ContextCompacted,
        FileChanged,
        ModelRetry,
        Notice,
        PlanUpdated,
        SkillHit,
        SkillRead,
        ToolCalled,
        ToolReturned,
    )

    match event:
        case ToolCalled(name=name, unreadable=True):
            return f"→ {exact_line(name)}(arguments that could not be read)"
        case ToolCalled(name=name, arguments=arguments):
            return tool_call_line(name, arguments)
        case ToolReturned(name=name, ok=ok, result=result):
            return tool_result_lines(name, ok, result)
        case PlanUpdated(plan=plan):
            return plan_lines(plan)
        case CommandStarted(sandbox=sandbox) if sandbox:
            return f"  ({sandbox})"
        case CommandInterrupted(output=output):
            tail = "\n".join(output.rstrip().splitlines()[-MAX_RESULT_PREVIEW:])
            return "command interrupted; its process group was killed" + (
                f". Last output:\n{tail}" if tail else ""
            )
        case SkillHit(line=line) | SkillRead(line=line):
            return f"skill {line}"
        case ContextCompacted(reason=reason) if reason == COMPACT_ASKED:
            return ""  # /compact asked for it and says what it did, once
        case ContextCompacted(before_tokens=before, after_tokens=after):
            return f"context compacted: {before:,} -> {after:,} tokens"
        case Notice(message=message) | ModelRetry(message=message):
            return message
        case FileChanged(asked=True):
            return ""  # the diff was shown with the question: once is enough
        case FileChanged(diff=diff):
            return draw_diff(diff)
    return ""


def tool_call_line(name: str, arguments: Mapping[str, Any]) -> str:
    """'→ read_file(path=src/calc.js)'; a command is shown whole, never cut."""
    command = arguments.get("command")
    if (
        name == "run_command"
        and isinstance(command, str)
        and ("\n" in command or len(command) > 60)
    ):
        return "→ run_command:\n" + command_block(command)
    return f"→ {describe_call(name, arguments)}"


def tool_result_lines(name: str, ok: bool, result: str) -> str:
    """A short preview of a tool result, every invisible or control character as its code."""
    lines = exact(result).removesuffix("\n").split("\n")
    mark = "✓" if ok else "✗"
    shown = lines[:MAX_RESULT_PREVIEW]
    extra = len(lines) - len(shown)
    body = "\n".join(f"  {mark if i == 0 else ' '} {line}" for i, line in enumerate(shown))
    return body + (f"\n    … {plural(extra, 'more line')}" if extra > 0 else "")


def fold_thinking(text: str, shown: int = THINKING_SHOWN, more: str = "/thinking") -> str:
    """A reply's thinking, folded: its first lines, each control character as its code, and
    how many more there are (`more` says where they are)."""
    lines = [line for line in exact(text.strip()).split("\n") if line.strip()]
    if not lines:
        return ""
    head = lines[:shown]
    body = "\n".join(f"  ┊ {line}" for line in head)
    rest = len(lines) - len(head)
    tail = f"\n  ┊ … {plural(rest, 'more line')} ({more} shows them)" if rest > 0 else ""
    return f"thinking:\n{body}{tail}"


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
    out += [f"  not restored {p}" for p in report.problems]
    out += [f"  {note}" for note in report.notes]
    return "\n".join(out)


def rewind_lines(done: Rewound) -> str:
    """What /rewind did to the files and the conversation."""
    if not done.found:
        files = "no file changed since then (or checkpoints are off): files are as they are"
    else:
        r = done.report
        files = undo_lines(r).replace(f"undid {r.turn_label}:", "files:", 1)
        files = files if r.restored or r.removed or r.problems else files + "\n  none changed"
    return (
        f"rewound to before turn {done.turn}: the conversation holds the turns before it\n"
        f"{files}\n/undo takes the rewind back"
    )


def snapshot_lines(undoable: Sequence[Undoable]) -> str:
    """The turns /undo can still revert, newest first."""
    if not undoable:
        return "no undoable turns"
    out = ["undoable turns, newest first (/undo reverts the top one):"]
    for u in undoable:
        files = ", ".join(f.path + ("" if f.existed else " (new)") for f in u.files)
        out.append(f"  session {u.session} turn {u.turn}: {files}")
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


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def ledger_table(entry: TurnLedger) -> str:
    """The per-turn ledger as a terminal table (a calibrated column once a factor exists)."""
    head = (
        f"turn {entry.turn} ledger · tokens estimated with {entry.encoding}"
        f" · context window {entry.window:,} · {plural(entry.model_calls, 'model call')},"
        " last one shown"
    )
    factor = entry.calibration
    cal_head = f" {'calibr.':>7}" if factor else ""
    lines = [head, f"{'piece':<46} {'chars':>8} {'tokens':>7}{cal_head} {'window':>7}  why"]

    def cal(tokens: int) -> str:
        return f" {round(tokens * factor):>7,}" if factor else ""

    for r in entry.rows:
        share = f"{r.tokens / entry.window:.1%}" if r.chars else "-"
        lines.append(
            f"{_cut(r.label, 46):<46} {r.chars:>8,} {r.tokens:>7,}{cal(r.tokens)} {share:>7}"
            f"  {_cut(r.reason, 70)}"
        )
    remaining = entry.window - entry.tokens
    lines.append(
        f"{'total':<46} {entry.chars:>8,} {entry.tokens:>7,}{cal(entry.tokens)}"
        f" {entry.tokens / entry.window:>7.1%}  window remaining {remaining:,} tokens"
    )
    if entry.provider_prompt_tokens:
        ratio = entry.provider_prompt_tokens / max(entry.tokens, 1)
        cached = (
            f"; {entry.cached_tokens:,} read from its cache,"
            f" {entry.provider_prompt_tokens - entry.cached_tokens:,} not"
            if entry.cached_tokens
            else ""
        )
        if entry.cache_write_tokens:
            cached += f"; {entry.cache_write_tokens:,} written to it"
        outlier = "" if entry.calibration_used else "; an outlier, not used for calibration"
        lines.append(
            f"provider reported {entry.provider_prompt_tokens:,} prompt tokens"
            f" (ratio {ratio:.2f} to the estimate{cached}{outlier})"
        )
    if entry.reasoning_tokens:
        lines.append(
            f"the model reasoned for {entry.reasoning_tokens:,} of its answer tokens this turn"
            " (billed as output; reasoning sent back is priced in the rows above)"
        )
    if entry.calibrated is not None and entry.calibration is not None:
        lines.append(
            f"calibrated estimate {entry.calibrated:,} tokens (factor {entry.calibration:.3f},"
            " moving average of provider/estimate for this model at this base URL)"
        )
    if entry.compaction:
        c = entry.compaction
        kept = ", ".join(c["protected_kept"]) or "none"
        lines.append(
            f"compaction: {c['before_tokens']:,} -> {c['after_tokens']:,} tokens;"
            f" protected skills kept verbatim: {kept}"
        )
    return "\n".join(lines)


def ledger_summary(entries: Sequence[TurnLedger]) -> str:
    """/ledger all: one line per turn."""
    if not entries:
        return "no turns yet"
    lines = [
        "tokens estimated per turn (last request of each turn)",
        f"{'turn':>4} {'total':>8} {'stage1':>7} {'stage2':>7} {'stage3':>7} {'history':>8}"
        f" {'calls':>5}  notes",
    ]
    for e in entries:
        history = e.stage_tokens("history") + e.stage_tokens("tools-turn")
        note = "compacted" if e.compaction else ""
        lines.append(
            f"{e.turn:>4} {e.tokens:>8,} {e.stage_tokens('stage1'):>7,}"
            f" {e.stage_tokens('stage2'):>7,} {e.stage_tokens('stage3'):>7,} {history:>8,}"
            f" {e.model_calls:>5}  {note}"
        )
    return "\n".join(lines)
