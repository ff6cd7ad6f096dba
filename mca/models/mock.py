"""Offline models: MockModel understands a few plain intents; ScriptedModel replays a file.

Both go through exactly the same loop and tools as a real model. MockModel is stateless: it
reads the last user sentence and the tool results since then to decide its next step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mca.errors import ScriptExhausted
from mca.fs.careful import read_regular
from mca.models import shape
from mca.models.mock_tasks import Step, task_step
from mca.types import (
    KIND_CHAT,
    KIND_SUMMARY,
    Message,
    Reasoning,
    Request,
    Response,
    TextSink,
    ToolCall,
    Usage,
)

__all__ = [
    "CALC_RULES",
    "HELP",
    "MAX_SCRIPT_BYTES",
    "PATH",
    "MockModel",
    "ScriptedModel",
    "Step",
    "calc_convention",
    "script_line",
]

MAX_SCRIPT_BYTES = 256 * 1024 * 1024  # a recorded session's script, never more
PATH = r"(?P<path>[\w@.\-/]*[\w-]\.\w+|[\w.\-]+/[\w.\-/]+)"
CALC_RULES = (
    ("throw", re.compile(r"\*\*Rule:\*\*\s*`divide\(a, 0\)` must throw")),
    ("infinity", re.compile(r"\*\*Rule:\*\*\s*`divide\(a, 0\)` returns `Infinity`")),
)
HELP = (
    "I am mca's offline mock model. I understand: fix the failing test, what does this project"
    " do, add a test for NAME, read FILE, list [DIR], search for TEXT,"
    ' run `COMMAND`, replace "OLD" with "NEW" in FILE, create FILE with "TEXT", and fix the'
    " divide-by-zero problem in FILE. Set an API key to talk to a real model."
)


def _turn_state(request: Request) -> tuple[str, list[Message]]:
    """The last chat sentence and the tool results that followed it."""
    msgs = request.messages
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].role == "user" and msgs[i].kind == KIND_CHAT:
            return msgs[i].content, [m for m in msgs[i + 1 :] if m.role == "tool"]
    return "", []


def _context_text(request: Request) -> str:
    return request.system + "\n" + "\n".join(m.content for m in request.messages)


def calc_convention(request: Request) -> str:
    """Which divide-by-zero rule is in the model's context: throw, infinity, or none."""
    text = _context_text(request)
    found = [(m.start(), name) for name, rx in CALC_RULES if (m := rx.search(text))]
    return min(found)[1] if found else "none"


def _fix_divide(request: Request, path: str, results: list[Message]) -> Step:
    rule = calc_convention(request)
    if not results:
        return Step((("read_file", {"path": path}),))
    if rule == "none":
        return Step(
            answer=f"I read {path}, but no project convention for division by zero is in my"
            " context, so I left the file unchanged. Should divide(a, 0) throw or return"
            " Infinity?"
        )
    if len(results) == 1:
        source = results[0].content
        line = re.search(r"^\s*\d+\t(?P<indent>\s*)return a / b;\s*$", source, re.M)
        if line is None:
            return Step(answer=f"I could not find `return a / b;` in {path}; nothing changed.")
        ind = line["indent"]
        guard = (
            f'{ind}if (b === 0) {{\n{ind}  throw new RangeError("division by zero");\n{ind}}}\n'
            if rule == "throw"
            else f"{ind}if (b === 0) {{\n{ind}  return Infinity;\n{ind}}}\n"
        )
        old = f"{ind}return a / b;"
        return Step((("edit_file", {"path": path, "old_text": old, "new_text": guard + old}),))
    if len(results) == 2:
        return Step((("run_command", {"command": "node --test"}),))
    last = results[-1].content
    if "exit code 0" in last:
        checked = "I ran `node --test` and the tests pass"
    elif "exit code" in last:
        checked = "I ran `node --test` and the tests still fail"
    else:
        checked = "the tests did not run (`node --test` was not run)"
    what = "throws a RangeError" if rule == "throw" else "returns Infinity"
    return Step(
        answer=f"Following the project convention in my context, divide(a, 0) now {what}"
        f" in {path}; {checked}. Use /undo to revert."
    )


def _simple(tool: str, args: dict[str, Any], results: list[Message], lead: str) -> Step:
    if not results:
        return Step(((tool, args),))
    body = results[-1].content
    lines = body.splitlines()
    shown = "\n".join(lines[:20]) + ("\n…" if len(lines) > 20 else "")
    return Step(answer=f"{lead}\n{shown}")


def _intent(sentence: str, request: Request, results: list[Message]) -> Step:
    s = sentence.strip()
    if m := re.search(r"(divide|division)[- ]by[- ]zero.*?\bin\s+" + PATH, s, re.I):
        return _fix_divide(request, m["path"], results)
    if (step := task_step(s, request)) is not None:
        return step
    if m := re.search(r"\brun\s+`(?P<cmd>[^`]+)`", s, re.I) or re.search(
        r"^run\s+(?P<cmd>.+)$", s, re.I
    ):
        return _simple("run_command", {"command": m["cmd"]}, results, "I ran it:")
    if m := re.search(r'replace\s+"(?P<old>[^"]+)"\s+with\s+"(?P<new>[^"]*)"\s+in\s+' + PATH, s):
        args = {"path": m["path"], "old_text": m["old"], "new_text": m["new"]}
        return _simple("edit_file", args, results, "Done:")
    if m := re.search(r"(create|write)\s+" + PATH + r'\s+(with|containing)\s+"(?P<text>.*)"', s):
        text = m["text"].encode().decode("unicode_escape") + "\n"
        return _simple("write_file", {"path": m["path"], "content": text}, results, "Done:")
    if m := re.search(
        r"\b(search|grep|look)\s+(for\s+)?[\"'`]?(?P<q>[^\"'`]+?)[\"'`]?\s*$", s, re.I
    ):
        return _simple("search_text", {"pattern": re.escape(m["q"])}, results, "Matches:")
    if m := re.search(
        r"\b(read|show|open|cat|explain)\s+(me\s+)?(the\s+file\s+)?@?" + PATH, s, re.I
    ):
        return _simple("read_file", {"path": m["path"]}, results, f"Here is {m['path']}:")
    if m := re.search(r"\b(list|ls)\b(\s+(the\s+)?(files\s+in\s+)?(?P<dir>[\w./-]+/?))?", s, re.I):
        target = m["dir"] if m["dir"] and m["dir"] not in ("files", "directory", "dir") else "."
        return _simple("list_dir", {"path": target, "depth": 2}, results, "The workspace has:")
    return Step(answer=HELP)


def _summary(request: Request) -> str:
    """A deterministic compaction summary: one line per earlier user sentence."""
    asks = [m.content.splitlines()[0][:120] for m in request.messages if m.role == "user"]
    return "Summary of the earlier conversation. The user asked:\n" + "\n".join(
        f"- {a}" for a in asks if a
    )


def _stream(text: str, on_text: TextSink | None) -> None:
    if on_text is None:
        return
    for word in re.findall(r"\S+\s*|\s+", text):
        on_text(word)


class MockModel:
    """A deterministic model with a handful of intents; useful offline, never random."""

    name = "mock"

    def __init__(self) -> None:
        self._ids = 0

    def complete(
        self,
        request: Request,
        on_text: TextSink | None = None,
        on_thinking: TextSink | None = None,
    ) -> Response:
        if request.system.startswith("SUMMARIZE"):
            return Response(Message("assistant", _summary(request), kind=KIND_SUMMARY))
        sentence, results = _turn_state(request)
        step = _intent(sentence, request, results)
        calls = []
        for tool, args in step.calls:
            self._ids += 1
            calls.append(ToolCall(f"mock_{self._ids}", tool, args))
        _stream(step.answer, on_text)
        return Response(Message("assistant", step.answer, tool_calls=tuple(calls)))

    def close(self) -> None:
        return None


def script_line(message: Message, usage: Usage | None) -> str:
    """One MCA_MOCK_SCRIPT line for an assistant message (used by --record): its thinking as
    text (what a provider needs to have it back stays with the provider's session)."""
    obj: dict[str, Any] = {"content": message.content}
    thought = "\n\n".join(r.text for r in message.reasoning if r.text)
    if thought:
        obj["thinking"] = thought
    if message.tool_calls:
        obj["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": dict(c.arguments)} for c in message.tool_calls
        ]
    if usage is not None:
        obj["usage"] = {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
        }
    return json.dumps(obj, ensure_ascii=False)


def _parse_line(path: Path, n: int, line: str) -> Response:
    """One MCA_MOCK_SCRIPT line, read as a server's answer is: a line of the wrong shape is an
    error naming it; arguments that are not an object are answered "not run", as a real
    model's would be; usage of the wrong shape is left out."""
    where = f"{path}:{n}"
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as e:
        raise ScriptExhausted(f"{where}: not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise ScriptExhausted(f"{where}: each line must be a JSON object")
    raw_calls = obj.get("tool_calls") or []
    content = obj.get("content") or ""
    thought = obj.get("thinking") or ""
    if not isinstance(raw_calls, list) or not isinstance(content, str):
        raise ScriptExhausted(f"{where}: 'tool_calls' must be a list and 'content' a string")
    if not isinstance(thought, str):
        raise ScriptExhausted(f"{where}: 'thinking' must be a string")
    calls = []
    for i, c in enumerate(raw_calls, 1):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not c["name"]:
            raise ScriptExhausted(f"{where}: tool call {i} needs a 'name'")
        arguments, invalid = shape.arguments(c.get("arguments"), f"the {c['name']!r} tool call")
        call_id = c.get("id") if isinstance(c.get("id"), str) else ""
        calls.append(ToolCall(call_id or f"script_{n}_{i}", c["name"], arguments, invalid))
    usage = shape.usage(obj.get("usage"), ("prompt_tokens",), "completion_tokens")
    reasoning = (Reasoning(thought),) if thought else ()
    return Response(Message("assistant", content, tuple(calls), reasoning=reasoning), usage)


class ScriptedModel:
    """Replays MCA_MOCK_SCRIPT: one JSON object per line, one line per model call."""

    name = "mock-script"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines: Iterator[tuple[int, str]] | None = None
        self.used = 0

    def _next_line(self) -> tuple[int, str]:
        if self._lines is None:
            try:  # a regular file (never a FIFO that would wait), of a sane size
                data = read_regular(self.path, cap=MAX_SCRIPT_BYTES, follow=True)
            except OSError as e:
                raise ScriptExhausted(
                    f"cannot read mock script {self.path}: {e.strerror or e}"
                ) from None
            text = data.decode("utf-8", "replace")
            self._lines = ((n, ln) for n, ln in enumerate(text.splitlines(), 1) if ln.strip())
        try:
            return next(self._lines)
        except StopIteration:
            raise ScriptExhausted(
                f"mock script {self.path} has no more responses (it held {self.used})"
            ) from None

    def complete(
        self,
        request: Request,
        on_text: TextSink | None = None,
        on_thinking: TextSink | None = None,
    ) -> Response:
        n, line = self._next_line()
        self.used += 1
        response = _parse_line(self.path, n, line)
        for r in response.message.reasoning:
            _stream(r.text, on_thinking)
        _stream(response.message.content, on_text)
        return response

    def close(self) -> None:
        return None
