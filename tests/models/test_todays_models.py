"""Issue 31's acceptance: `mca -p` with today's models completes a three-tool turn against a
fake that refuses what the real APIs refuse (tests/strict_server.py), in text and in
stream-json: gpt-5 and o4-mini (the Responses API by default, and Chat Completions when asked),
a Responses-only model, claude-sonnet-4-5 with extended thinking, an adaptive thinker, and a
compatible server that streams `reasoning_content`. The thinking is shown, never answered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakeserver import FakeServer
from tests.strict_server import REASONING_TOKENS, StrictServer

MCA = Path(sys.executable).parent / "mca"
KEY = "sk-strict-planted-0123456789abcdef"
ANSWER = "Three tools ran. The file says MAGIC-42."
TOOLS = ["list_dir", "read_file", "search_text"]
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not MCA.exists(), reason="mca not installed"),
    pytest.mark.slow,  # the installed mca against the strict fake, per model
]

# (model, extra flags, extra settings, does its reasoning show as thinking)
CASES = [
    ("gpt-5", (), {}, True),  # the Responses API: reasoning summaries are thinking
    ("gpt-5", (), {"MCA_WIRE": "chat"}, False),  # Chat Completions: OpenAI shows no reasoning
    ("o4-mini", ("--reasoning", "high"), {}, True),
    ("o4-mini", (), {"MCA_WIRE": "chat"}, False),
    ("gpt-5-codex", (), {}, True),  # served only by the Responses API
    ("claude-sonnet-4-5", ("--thinking", "2048"), {}, True),
    ("claude-sonnet-5", ("--reasoning", "high"), {}, True),  # adaptive thinking only
    ("qwen3:8b", (), {}, True),  # a compatible server's reasoning_content
]
IDS = [f"{m}{'-' + '-'.join(f) if f else ''}{'-chat' if e else ''}" for m, f, e, _ in CASES]


@pytest.fixture
def server() -> Iterator[tuple[FakeServer, StrictServer]]:
    rules = StrictServer(answer="Three tools ran.")
    srv = FakeServer(rules)
    srv.start()
    yield srv, rules
    srv.stop()


def run(
    srv: FakeServer, ws: Path, model: str, flags: tuple[str, ...], extra: dict[str, str], *out: str
) -> subprocess.CompletedProcess[str]:
    (ws / "notes.txt").write_text("the code is MAGIC-42\n")
    anthropic = model.startswith("claude")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(ws.parent),
        "MCA_HOME": str(ws.parent / "home"),
        "MCA_PROVIDER": "anthropic" if anthropic else "openai",
        "MCA_BASE_URL": srv.url if anthropic else f"{srv.url}/v1",
        "MCA_API_KEY": KEY,
        "MCA_RETRY_BASE": "0.01",
        **extra,
    }
    argv = [str(MCA), "-C", str(ws), "-p", "what does notes.txt say?", "--model", model]
    return subprocess.run(
        [*argv, "--yes", *flags, *out], env=env, capture_output=True, text=True, timeout=60
    )


def in_text(proc: subprocess.CompletedProcess[str], model: str, thinks: bool) -> None:
    assert proc.stdout.strip() == ANSWER  # the answer alone: no thinking on stdout
    calls = [line.split("(")[0] for line in proc.stderr.splitlines() if line.startswith("→ ")]
    assert calls == [f"→ {t}" for t in TOOLS]
    assert ("thinking:" in proc.stderr and "Step 1:" in proc.stderr) is thinks


def in_stream_json(proc: subprocess.CompletedProcess[str], model: str, thinks: bool) -> None:
    lines: list[dict[str, Any]] = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["name"] for r in lines if r["type"] == "tool.call"] == TOOLS
    last = max(i for i, r in enumerate(lines) if r["type"] == "tool.result")
    text = "".join(r["text"] for r in lines[last:] if r["type"] == "text.delta")
    assert text.strip() == ANSWER == lines[-1]["answer"].strip()
    thought = "".join(r["text"] for r in lines if r["type"] == "thinking.delta")
    assert ("Step 1:" in thought and "Step 4:" in thought) is thinks
    said = "".join(r["text"] for r in lines if r["type"] == "text.delta")
    assert "Step" not in said  # thinking never comes as text
    usage = lines[-2]
    assert usage["type"] == "usage" and usage["reported_by_provider"]
    if not model.startswith(("claude", "qwen")):
        assert usage["reasoning_tokens"] == 4 * REASONING_TOKENS
    if model.startswith("claude"):
        assert usage["cached_tokens"] > 0  # the rolling breakpoint: later calls read the turn


OUTPUTS = {
    "text": ((), in_text),
    "stream-json": (("--output-format", "stream-json"), in_stream_json),
}


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize(("model", "flags", "extra", "thinks"), CASES, ids=IDS)
def test_a_three_tool_turn(
    server: tuple[FakeServer, StrictServer],
    ws: Path,
    model: str,
    flags: tuple[str, ...],
    extra: dict[str, str],
    thinks: bool,
    output: str,
) -> None:
    srv, rules = server
    how, check = OUTPUTS[output]
    proc = run(srv, ws, model, flags, extra, *how)
    assert rules.refused == [] and proc.returncode == 0, (rules.refused, proc.stderr)
    check(proc, model, thinks)
    assert KEY not in proc.stdout + proc.stderr
