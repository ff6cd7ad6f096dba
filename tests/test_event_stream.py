"""`mca -p --output-format stream-json`: every event kind documented, every line it writes
matching its schema, a turn rebuilt from its stream, and no planted key in any line."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from mca import events
from mca.cli import main
from mca.events import Event
from mca.text.diff import FileDiff
from mca.tools.allow import Answer, CommandQuestion
from mca.ui import stream_events
from mca.ui.jsonl import StreamUI
from tests.conftest import REPO

SCHEMA = json.loads((REPO / "mca" / "data" / "events.schema.json").read_text(encoding="utf-8"))
DEFS: dict[str, Any] = SCHEMA["$defs"]
KEY = "sk-ant-planted-0123456789abcdef"  # planted: must never appear in a line
# What `check` below understands; the schema may use nothing else (or it would go unchecked).
KEYWORDS = {"type", "const", "enum", "properties", "required", "additionalProperties", "items"}
KEYWORDS |= {"description", "allOf", "if", "then"}
TYPES: dict[str, type] = {"object": dict, "array": list, "string": str, "null": type(None)}


def fits(value: Any, name: str) -> bool:
    """Is `value` of JSON type `name` (a bool is never a number)?"""
    if isinstance(value, bool):
        return name == "boolean"
    if name in ("integer", "number"):
        return isinstance(value, int) or (name == "number" and isinstance(value, float))
    return name in TYPES and isinstance(value, TYPES[name])


def check(value: Any, schema: dict[str, Any], where: str = "$", exact: bool = False) -> list[str]:
    """The ways `value` breaks `schema` (a small subset of JSON Schema: KEYWORDS, and $ref to
    this file's $defs). `exact`: as mca's own lines must be, every field listed (the schema
    lets a consumer's mca be older than the lines it reads: it allows fields it does not list)."""
    problems: list[str] = []
    if "$ref" in schema:
        problems += check(value, DEFS[schema["$ref"].removeprefix("#/$defs/")], where, exact)
    for part in schema.get("allOf", []):
        problems += check(value, part, where, exact)
    if "if" in schema and not check(value, schema["if"], where):
        problems += check(value, schema.get("then", {}), where, exact)
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(fits(value, n) for n in names):
            return [f"{where}: {value!r} is not {names}"]
    if "const" in schema and value != schema["const"]:
        problems.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        problems += [f"{where}: {k} missing" for k in schema.get("required", []) if k not in value]
        extra = schema.get("additionalProperties", not (exact and props) or schema is SCHEMA)
        for k, v in value.items():
            if k in props:
                problems += check(v, props[k], f"{where}.{k}", exact)
            elif extra is False:
                problems.append(f"{where}: {k} is not in the schema")
            elif isinstance(extra, dict):
                problems += check(v, extra, f"{where}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            problems += check(v, schema["items"], f"{where}[{i}]", exact)
    return problems


def line_problems(record: dict[str, Any]) -> list[str]:
    """The ways a line of mca's breaks the schema, checked from its root (which dispatches on
    `type`) as exactly as mca's own lines must match it (a known kind, only listed fields),
    and by a real validator too where one is installed."""
    kind = str(record.get("type"))
    problems = check(record, SCHEMA, kind, exact=True)
    problems += [] if kind in DEFS else [f"{kind}: not a kind the schema lists"]
    if VALIDATOR is not None:
        problems += [f"jsonschema: {e.message}" for e in VALIDATOR.iter_errors(record)]
    return problems


def _validator() -> Any:
    """jsonschema's validator for the schema (a dev dependency: None without it)."""
    try:
        import jsonschema
    except ImportError:
        return None
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


VALIDATOR = _validator()


def event_classes() -> list[type[Event]]:
    """Every kind: a session's events and the records -p's stream adds."""
    found = {**vars(events), **vars(stream_events)}.values()
    return [c for c in found if isinstance(c, type) and issubclass(c, Event) and c is not Event]


def env(ws: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(ws.parent), "MCA_HOME": os.environ["MCA_HOME"], **extra}


def script(tmp_path: Path, *replies: dict[str, Any]) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in replies))
    return str(path)


def stream(
    ws: Path, capsys: pytest.CaptureFixture[str], sentence: str, *flags: str, **environ: str
) -> tuple[int, list[dict[str, Any]], str]:
    """(exit code, the lines as objects, stdout as written) of one streamed -p turn."""
    argv = ["-C", str(ws), "-p", sentence, "--output-format", "stream-json", *flags]
    code = main(argv, env(ws, **environ))
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines()], out


def logs() -> list[Path]:
    """The session logs so far (listed, not globbed: Python 3.11's glob can leave a scandir
    iterator open, which the warnings-as-errors setting turns into a failure)."""
    where = Path(os.environ["MCA_HOME"]) / "logs"
    return sorted(p for p in where.iterdir() if p.suffix == ".jsonl")


def log_records() -> list[dict[str, Any]]:
    """Every record of every session log so far, as a stream line ('event' read as 'type')."""
    records = []
    for path in logs():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            r.pop("ts")
            records.append({"type": r.pop("event"), **r})
    return records


THREE_TOOLS = (
    {
        "content": "I'll write it first.",
        "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "x\n"}}],
    },
    {"tool_calls": [{"name": "list_dir", "arguments": {}}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
    {"content": "a.txt holds one line: x", "usage": {"prompt_tokens": 9, "completion_tokens": 4}},
)


# -- the schema and the dataclasses agree ------------------------------------------------------
def test_every_event_kind_has_a_documented_schema() -> None:
    kinds = {c.kind for c in event_classes()}
    assert kinds == set(DEFS), f"undocumented: {kinds - set(DEFS)}, stale: {set(DEFS) - kinds}"
    docs = (REPO / "docs" / "EVENTS.md").read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `([a-z_.]+)` \|", docs, re.M))
    assert table == kinds, table ^ kinds
    for c in event_classes():  # a record from the dataclass's own fields: the schema names them
        if c.to_json is not Event.to_json:
            continue  # its own record (checked by the lines below)
        fields = {f.name.rstrip("_") for f in dataclasses.fields(c)} | {"type"}
        assert set(DEFS[c.kind]["properties"]) == fields, c.kind
        assert set(DEFS[c.kind]["required"]) == fields, c.kind
    assert SCHEMA["schema_version"] == events.EVENTS_SCHEMA_VERSION


def test_the_schema_uses_only_what_the_check_checks() -> None:
    def walk(node: Any, inside_properties: bool = False) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if not inside_properties:
                    assert k in KEYWORDS or k.startswith("$") or node is SCHEMA, k
                walk(v, k == "properties" and not inside_properties)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for d in DEFS.values():
        walk(d)
    assert check({"type": "x"}, {"type": "object", "required": ["y"]}) == ["$: y missing"]
    assert check(True, {"type": "integer"}) and not check(None, {"type": ["integer", "null"]})


def test_the_root_schema_dispatches_on_type() -> None:
    """A line is valid only as the kind its `type` says (the root used to accept any object
    with a known `type`); the root and each kind's entry agree, by the check here and by a
    real validator."""
    call = {"type": "tool.call", "id": "call_1", "name": "read_file", "arguments": {}}
    result = {"type": "tool.result", "id": "call_1", "name": "read_file", "ok": True, "result": ""}
    assert line_problems(call) == [] and line_problems(result) == []
    wrong = [
        {"type": "tool.call"},  # a known type and nothing else
        {**call, "type": "tool.result"},  # a call's fields under a result's type
        {k: v for k, v in result.items() if k != "id"},  # a result must say which call
        {"type": 7},
    ]
    for line in wrong:
        assert check(line, SCHEMA), line
    assert VALIDATOR is not None  # jsonschema is a dev dependency: the real check runs
    for line in wrong:
        assert list(VALIDATOR.iter_errors(line)), line
    # what a newer mca may write at schema_version 1: valid, to be ignored by a reader that
    # does not know it (the description says so); never written by this mca (exact check)
    newer: list[dict[str, Any]] = [{**call, "extra": 1}, {"type": "no.such.kind", "x": [1]}]
    for line in newer:
        assert check(line, SCHEMA) == [] and not list(VALIDATOR.iter_errors(line)), line
        assert line_problems(line), line
    assert "accepts kinds and fields it does not list" in SCHEMA["description"]
    assert {part["then"]["$ref"] for part in SCHEMA["allOf"]} == {f"#/$defs/{k}" for k in DEFS}


# -- streamed turns ----------------------------------------------------------------------------
def test_a_three_tool_turn_rebuilt_from_its_stream(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines, _ = stream(ws, capsys, "go", MCA_MOCK_SCRIPT=script(tmp_path, *THREE_TOOLS))
    assert code == 0
    assert lines[0]["type"] == "session.start" and lines[0]["schema_version"] == 1
    assert lines[0]["mode"] == "auto-edit" and lines[0]["workspace"] == str(ws.resolve())
    assert [line_problems(r) for r in lines if line_problems(r)] == []
    calls = [(r["name"], r["arguments"]) for r in lines if r["type"] == "tool.call"]
    assert calls == [
        ("write_file", {"path": "a.txt", "content": "x\n"}),
        ("list_dir", {}),
        ("read_file", {"path": "a.txt"}),
    ]
    results = [r for r in lines if r["type"] == "tool.result"]
    assert [r["ok"] for r in results] == [True, True, True] and "x" in results[2]["result"]
    ids = [r["id"] for r in lines if r["type"] == "tool.call"]
    assert len(set(ids)) == 3 and [r["id"] for r in results] == ids  # each result, its call
    last = max(i for i, r in enumerate(lines) if r["type"] == "tool.result")
    answer = "".join(r["text"] for r in lines[last:] if r["type"] == "text.delta")
    assert answer == "a.txt holds one line: x" == lines[-1]["answer"]
    before = "".join(r["text"] for r in lines[:last] if r["type"] == "text.delta")
    assert before == "I'll write it first."
    assert [r["type"] for r in lines[-2:]] == ["usage", "turn.end"]
    assert lines[-2]["prompt_tokens"] == 9 and lines[-2]["model_calls"] == 4
    assert lines[-2]["duration_ms"] >= 0 and lines[-2]["cost"]["usd"] == 0.0  # the mock's
    assert lines[-1]["stop_reason"] == "end" and lines[-1]["turn"] == 1
    assert [r["type"] for r in lines].count("file.changed") == 1
    logged = [r for r in log_records() if r["type"] == "session.start"]
    assert logged == lines[:1]  # the log keeps the same record


def test_every_line_and_log_record_matches_its_schema(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turns that end every way (an answer, a refused command, the step limit, an error, a
    resumed session, a plan): each line and each log record fits its kind's schema."""
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal: commands are refused
    seen: list[dict[str, Any]] = []
    cases: list[tuple[tuple[dict[str, Any], ...], tuple[str, ...], int]] = [
        (THREE_TOOLS, ("--ledger",), 0),
        (
            (
                {"tool_calls": [{"name": "run_command", "arguments": {"command": "touch made"}}]},
                {
                    "tool_calls": [
                        {
                            "name": "update_plan",
                            "arguments": {"steps": [{"step": "a", "status": "pending"}]},
                        }
                    ]
                },
                {"tool_calls": [{"name": "read_file", "arguments": "{not json"}]},
                {"content": "refused"},
            ),
            ("--sandbox", "off"),
            0,
        ),
        (({"tool_calls": [{"name": "list_dir", "arguments": {}}]},) * 3, ("--max-steps", "2"), 1),
        ((), ("--continue",), 1),  # resumed; then the script is empty: an error
    ]
    for replies, flags, want in cases:
        path = script(tmp_path, *replies)
        code, lines, _ = stream(ws, capsys, "go", *flags, MCA_MOCK_SCRIPT=path)
        assert code == want, lines
        seen += lines
    assert [p for r in seen + log_records() for p in line_problems(r)] == []
    kinds = {r["type"] for r in seen}
    assert {"approval.asked", "approval.answered", "plan.updated", "error", "turn.end"} <= kinds
    assert {"session.resumed", "text.delta", "usage", "file.changed", "ledger"} <= kinds
    ends = [r["stop_reason"] for r in seen if r["type"] == "turn.end"]
    assert ends == ["end", "end", "step_limit", "error"]
    asked = next(r for r in seen if r["type"] == "approval.answered")
    assert asked["subject"] == "touch made" and asked["answer"] == "unasked"  # no terminal
    assert not (ws / "made").exists()


def test_no_planted_key_in_any_line(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "notes.txt").write_text(f"the key is {KEY}\n")
    replies = (
        {
            "content": f"reading {KEY}",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
        },
        {"content": f"it says {KEY}."},
    )
    code, lines, out = stream(
        ws,
        capsys,
        f"what is {KEY}?",
        MCA_MOCK_SCRIPT=script(tmp_path, *replies),
        ANTHROPIC_API_KEY=KEY,
    )
    assert code == 0 and KEY not in out and "[REDACTED]" in out
    assert lines[-1]["answer"] == "it says [REDACTED]."


def test_a_key_split_across_deltas_is_caught() -> None:
    out = io.StringIO()

    class Refuse:
        def approve(self, question: CommandQuestion) -> Answer:
            return Answer.NO

        def approve_write(self, path: str, reason: str, diff: FileDiff) -> bool:
            return False

        def approve_edit(self, path: str, diff: FileDiff) -> bool:
            return True

    ui = StreamUI(out, (KEY,), Refuse())
    ui.start(events.SessionStarted("s1", "/w", "mock", "mock", "auto-edit"))
    for piece in ("the key ", KEY[:10], KEY[10:20], KEY[20:] + " end"):
        ui.text(piece)
    assert ui.approve(CommandQuestion(f"echo {KEY}")) is Answer.NO
    ui.end_text()
    text = out.getvalue()
    assert KEY not in text and KEY[:10] not in text
    deltas = [json.loads(x)["text"] for x in text.splitlines() if '"text.delta"' in x]
    assert "".join(deltas) == "the key [REDACTED] end"
    assert [p for x in text.splitlines() for p in line_problems(json.loads(x))] == []


def test_startup_notices_wait_for_session_start() -> None:
    out = io.StringIO()
    ui = StreamUI(out, (), None)  # type: ignore[arg-type]  # nothing is asked
    ui.event(events.Notice("warning: early"))
    ui.start(events.SessionStarted("s1", "/w", "mock", "mock", "auto-edit"))
    kinds = [json.loads(x)["type"] for x in out.getvalue().splitlines()]
    assert kinds == ["session.start", "notice"]


# -- the flags ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv",
    [["--json"], ["--output-format", "stream-json"], ["--output-format", "text"], ["hi", "--json"]],
)
def test_output_flags_without_p_are_usage_errors(
    ws: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-C", str(ws), *argv], env(ws, MOCK="1")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "goes with -p" in err


def test_json_gains_the_session_id(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(ws), "-p", "hello", "--output-format", "json"], env(ws, MOCK="1")) == 0
    obj = json.loads(capsys.readouterr().out)
    found = logs()
    assert len(found) == 1 and found[0].stem.endswith("-" + obj["session"])
    argv = ["-C", str(ws), "-p", "x", "--json", "--output-format", "stream-json"]
    assert main(argv, env(ws, MOCK="1")) == 2
    assert "give one of them" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("model", "priced"), [("gpt-4o", True), ("local-model", False), ("mock", True)]
)
def test_json_says_how_long_the_turn_took_and_what_it_cost(
    ws: Path, capsys: pytest.CaptureFixture[str], model: str, priced: bool
) -> None:
    from tests.fakeserver import serve
    from tests.strict_server import StrictServer

    with serve(StrictServer(script=(), answer="Hi.")) as srv:
        wire = {"MCA_PROVIDER": "openai", "MCA_BASE_URL": f"{srv.url}/v1", "MCA_API_KEY": "k"}
        where = {"MOCK": "1"} if model == "mock" else wire
        argv = ["-C", str(ws), "-p", "hello", "--json"]
        assert main(argv, env(ws, MCA_MODEL=model, MCA_CONTEXT_WINDOW="32000", **where)) == 0
    obj = json.loads(capsys.readouterr().out)
    assert isinstance(obj["duration_ms"], int) and 0 <= obj["duration_ms"] < 60_000
    cost = obj["cost"]
    if model == "mock":
        assert cost["usd"] == 0.0 and "mock" in cost["prices_from"]
    elif priced:
        assert cost["usd"] > 0 and cost["prices_from"].startswith("built-in table of")
        assert cost["tokens"] == "provider-reported"
    else:
        assert cost["usd"] is None and cost["prices_from"] is None
        assert "no price known for 'local-model'" in cost["why"]
