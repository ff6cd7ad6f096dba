"""The offline mock's agent work on a project: "fix the failing test", "what does this project
do", "add a test for NAME". Each next step is decided from what the tools returned so far in
the turn (the listing, the files read, the test runs, the edit), as a model's would be: the
same production loop runs them, the sandbox runs the tests, and edits go through approval
and snapshots. Deterministic, offline."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mca.models import mock_read as rd
from mca.text.counts import plural
from mca.types import KIND_CHAT, Message, Request

__all__ = ["Step", "Turn", "task_step"]

FIX = re.compile(r"\b(fix|repair)\b.*\btests?\b|\bmake\b.*\btests?\b.*\bpass", re.I)
ABOUT = re.compile(
    r"\bwhat\b.*\b(project|repo|repository|codebase|workspace)\b.*\b(do|does|is|about|for)\b"
    r"|\b(explain|describe|summari[sz]e)\b.*\b(project|repo|repository|codebase|workspace)\b",
    re.I,
)
ADD_TEST = re.compile(r"\b(add|write)\s+(a\s+|some\s+)?tests?\s+for\s+(the\s+)?`?(?P<fn>\w+)", re.I)
UNDO = "/undo takes the change back"


@dataclass
class Step:
    """The mock's next move: tool calls, or a final answer."""

    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    answer: str = ""


def _call(tool: str, **args: Any) -> Step:
    return Step(((tool, args),))


@dataclass
class Turn:
    """What this turn's tool calls returned: the listing, files read, runs and edits."""

    listing: list[str] | None = None
    reads: dict[str, str] = field(default_factory=dict)
    unread: set[str] = field(default_factory=set)  # asked for, refused or missing
    runs: list[str] = field(default_factory=list)
    edits: list[tuple[bool, str]] = field(default_factory=list)

    @classmethod
    def of(cls, request: Request) -> Turn:
        """The calls since the person's last sentence, each with its result."""
        msgs = request.messages
        chat = (i for i, m in enumerate(msgs) if m.role == "user" and m.kind == KIND_CHAT)
        start = max(chat, default=-1)
        results = {m.tool_call_id: m for m in msgs[start + 1 :] if m.role == "tool"}
        turn = cls()
        for m in msgs[start + 1 :]:
            for call in m.tool_calls if m.role == "assistant" else ():
                if (result := results.get(call.id)) is not None:
                    turn.add(call.name, call.arguments, result)
        return turn

    def add(self, name: str, args: Any, result: Message) -> None:
        """One call's result, filed by what it tells the mock."""
        text = result.content
        if name == "list_dir":
            self.listing = rd.listed_paths(text) if not result.is_error else []
        elif name == "read_file":
            if result.is_error:
                self.unread.add(str(args.get("path")))
            else:
                self.reads[str(args.get("path"))] = rd.file_text(text)
        elif name == "run_command":
            self.runs.append(text)
        elif name in ("edit_file", "write_file"):
            self.edits.append((not result.is_error, text))

    def read(self, path: str) -> Step | None:
        """A read_file of `path` unless it was read (or refused) already."""
        if path in self.reads or path in self.unread:
            return None
        return _call("read_file", path=path)

    def test_command(self) -> str | None:
        paths = self.listing or []
        return rd.test_command(paths, self.reads.get("package.json"))


def _first(*steps: Callable[[], Step | None]) -> Step | None:
    for step in steps:
        if (found := step()) is not None:
            return found
    return None


def _setup(t: Turn) -> Step | str | None:
    """The listing and the test command: a step to get them, a reason there is none, or None
    when both are known."""
    if t.listing is None:
        return _call("list_dir", path=".", depth=3)
    if "package.json" in t.listing and (step := t.read("package.json")):
        return step
    if t.test_command() is None:
        return "I found no tests I know how to run here (no package.json, no test_*.py)"
    return None


def _ran(command: str, run: str) -> str:
    counts = rd.test_counts(run)
    verdict = "pass" if rd.passed(run) else "fail"
    return f"`{command}`: the tests {verdict}" + (f" ({counts})" if counts else "")


def _fix_test(t: Turn) -> Step:
    setup = _setup(t)
    if isinstance(setup, str):
        return Step(answer=setup + "; nothing changed.")
    if setup is not None:
        return setup
    cmd = t.test_command() or ""
    if not t.runs:
        return _call("run_command", command=cmd)
    first = t.runs[0]
    if not rd.ran(first):
        return Step(answer=f"I could not run `{cmd}`: {first.splitlines()[0] if first else ''}")
    if rd.passed(first):
        return Step(answer=f"I ran {_ran(cmd, first)}. Nothing to fix; nothing changed.")
    failure = rd.first_failure(first)
    test_path = rd.resolve(failure.path, t.listing or []) if failure else None
    if failure is None or test_path is None:
        return Step(
            answer=f"I ran {_ran(cmd, first)}, but I cannot tell which test failed"
            " from its output (above); nothing changed."
        )
    return _repair(t, cmd, failure, test_path)


def _repair(t: Turn, cmd: str, failure: rd.Failure, test_path: str) -> Step:
    """After the first run: read the failing test and what it requires, edit, run again."""
    said = (
        f"I ran {_ran(cmd, t.runs[0])}: '{failure.name}' failed ({failure.error or 'no message'})"
    )
    if step := t.read(test_path):
        return step
    test_text = t.reads.get(test_path, "")
    sources = rd.required_sources(test_path, test_text, t.listing or [])
    if step := _first(*(lambda p=p: t.read(p) for p in sources)):
        return step
    fix = next(
        (f for p in sources if (f := rd.plan_fix(failure, test_text, p, t.reads.get(p, "")))),
        None,
    )
    if fix is None:
        return Step(
            answer=f"{said}. I read {test_path} and what it tests, but this failure"
            " is not one I can fix offline; nothing changed."
        )
    if not t.edits:
        return _call("edit_file", path=fix.path, old_text=fix.old, new_text=fix.new)
    ok, text = t.edits[-1]
    if not ok:
        return Step(answer=f"{said}. My edit was not made: {text}")
    if len(t.runs) < 2:
        return _call("run_command", command=cmd)
    return Step(
        answer=f"{said}. {fix.why[0].upper()}{fix.why[1:]}."
        f" I ran {_ran(cmd, t.runs[-1])} now. {UNDO}."
    )


def _about(t: Turn) -> Step:
    if t.listing is None:
        return _call("list_dir", path=".", depth=3)
    paths = t.listing
    readme = next((p for p in paths if posixpath.basename(p).lower().startswith("readme")), None)
    meta = [p for p in ("package.json", "pyproject.toml") if p in paths]
    code = [p for p in paths if p.endswith(rd.SOURCE_SUFFIXES) and not _is_test(p)][:3]
    wanted = [*(p for p in [readme] if p), *meta, *code]
    if step := _first(*(lambda p=p: t.read(p) for p in wanted)):
        return step
    parts = []
    if readme and readme in t.reads:
        parts.append(f"{readme} says: {_gist(t.reads[readme])}")
    if described := rd.package_description(t.reads.get("package.json")):
        parts.append(f"package.json calls it {described}")
    for p in code:
        names = re.findall(
            r"^\s*(?:export\s+)?(?:async\s+)?(?:function|def|class)\s+(\w+)",
            t.reads.get(p, ""),
            re.M,
        )
        if names:
            parts.append(f"{p} defines {', '.join(names)}")
    tests = [p for p in paths if _is_test(p)]
    cmd = t.test_command()
    if tests:
        parts.append(
            f"its tests are in {', '.join(tests)}" + (f" (`{cmd}` runs them)" if cmd else "")
        )
    body = "; ".join(parts) if parts else "I found nothing that says"
    return Step(answer=f"This project has {plural(len(paths), 'file')}. {body}.")


def _gist(text: str) -> str:
    """A README's title and first paragraph, on one line."""
    lines = [ln.strip() for ln in text.splitlines()]
    title = next((ln.lstrip("# ") for ln in lines if ln.startswith("#")), "")
    body = []
    for ln in lines:
        if ln and not ln.startswith("#"):
            body.append(ln)
        elif body:
            break
    return " ".join(x for x in [title + ("." if title else ""), *body] if x).rstrip(".")


def _is_test(path: str) -> bool:
    name = posixpath.basename(path)
    return ".test." in name or ".spec." in name or name.startswith("test_") or "/test" in path


def _add_test(t: Turn, fn: str) -> Step:
    setup = _setup(t)
    if isinstance(setup, str):
        return Step(answer=setup + "; nothing written.")
    if setup is not None:
        return setup
    paths = t.listing or []
    code = [p for p in paths if p.endswith((".js", ".cjs")) and not _is_test(p)]
    defines = rf"\bfunction\s+{re.escape(fn)}\s*\("
    home = next((p for p in code if re.search(defines, t.reads.get(p, ""))), None)
    if home is None:
        if step := _first(*(lambda p=p: t.read(p) for p in code)):
            return step
        return Step(
            answer=f"I read {', '.join(code) or 'no JavaScript files'} and found no"
            f" function {fn}; nothing written."
        )
    tests = sorted({posixpath.dirname(p) for p in paths if _is_test(p)}) or ["test"]
    names = (f"{fn}.test.js", f"{fn}.more.test.js")
    target = next((n for n in (posixpath.join(tests[0], n) for n in names) if n not in paths), "")
    cmd = t.test_command() or "node --test"
    if not t.edits:
        module = posixpath.relpath(home, tests[0])
        module = module if module.startswith(".") else "./" + module
        case = rd.arithmetic_case(fn, t.reads[home])
        check = (
            f"  assert.equal({case[0]}, {case[1]});"
            if case
            else f"  assert.equal(typeof {fn}, 'function');"
        )
        content = (
            "'use strict';\n\nconst test = require('node:test');\n"
            "const assert = require('node:assert/strict');\n"
            f"const {{ {fn} }} = require('{module}');\n\n"
            f"test('{fn}', () => {{\n{check}\n}});\n"
        )
        return _call("write_file", path=target, content=content)
    ok, text = t.edits[-1]
    if not ok:
        return Step(answer=f"I could not write {target}: {text}")
    if not t.runs:
        return _call("run_command", command=cmd)
    return Step(
        answer=f"I found {fn} in {home} and wrote a test for it in {target}. I ran"
        f" {_ran(cmd, t.runs[-1])}. {UNDO}."
    )


def task_step(sentence: str, request: Request) -> Step | None:
    """The next step of a project task the sentence asks for; None for any other sentence."""
    if FIX.search(sentence):
        return _fix_test(Turn.of(request))
    if m := ADD_TEST.search(sentence):
        return _add_test(Turn.of(request), m["fn"])
    if ABOUT.search(sentence):
        return _about(Turn.of(request))
    return None
