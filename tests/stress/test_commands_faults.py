"""Commands under load, and API faults: each ends in a retry that succeeds or a clear error,
with the conversation exactly as it was before the failed turn."""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from mca.agent import Agent
from mca.assembly.wiring import model_options
from mca.errors import ModelError
from mca.models.openai import OpenAIModel
from mca.models.retry import RetryPolicy
from mca.tools.base import ToolEnv
from mca.ui.render import progress_line
from tests.helpers import engine, settings_for
from tests.models.wire import Recorder, openai_json, openai_sse, sse
from tests.peak import run_measured

pytestmark = [
    pytest.mark.stress,
    pytest.mark.slow,  # the reliability suite (make stress runs it at full size)
]

MEASURE = """
import sys
from mca.tools.command import execute
cmd = "head -c 50000000 /dev/zero | tr '\\\\0' x; echo; echo END"
done = execute(cmd, ".", 120)
code, out, timed_out = done.code, done.output, done.timed_out
print(code, len(out), out.rstrip().endswith("END"))
"""


def test_fifty_megabytes_of_output_stay_bounded() -> None:
    out, peak_mb = run_measured(MEASURE)
    code, length, tail_kept = out.split()
    assert code == "0" and int(length) < 12_000 and tail_kept == "True"
    assert peak_mb < 120, f"peak RSS {peak_mb} MB while reading 50 MB of output"


def _model(tmp_path: Path, rec: Recorder | None = None, server: str = "http://fake") -> OpenAIModel:
    s = settings_for("openai", tmp_path, server=server, MCA_READ_TIMEOUT="0.5")
    transport = httpx.MockTransport(rec) if rec is not None else None
    policy = RetryPolicy(base=0.001, sleep=lambda _: None)
    return OpenAIModel(model_options(s), transport=transport, policy=policy)


CALL = [("c9", "read_file", {"path": "a.txt"})]
FAULTS: dict[str, tuple[list[httpx.Response | Exception], str]] = {
    "429 with Retry-After, then ok": (
        [httpx.Response(429, headers={"retry-after": "1"}), sse(openai_sse("fine"))],
        "ok",
    ),
    "500 then ok": ([httpx.Response(500), sse(openai_sse("fine"))], "ok"),
    "503 forever": ([httpx.Response(503)] * 5, "HTTP 503"),
    "read timeout forever": (
        [httpx.ReadTimeout("slow")] * 5,
        "no answer from .* within 0.5 s after 5 attempts",
    ),
    "stream cut mid tool call": ([sse(openai_sse("", CALL, cut=True))], "cut off"),
    "empty response": ([httpx.Response(200, json={"choices": []})], "unexpected response shape"),
    "not JSON at all": ([httpx.Response(200, text="<html>proxy error</html>")], "invalid JSON"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_api_faults(fault: str, env: ToolEnv, tmp_path: Path) -> None:
    replies, expect = FAULTS[fault]
    first = [sse(openai_sse("first answer"))]
    # non-streamed for the empty/not-JSON bodies, streamed otherwise
    stream = fault not in ("empty response", "not JSON at all")
    rec = Recorder(*first, *replies)
    model = _model(tmp_path, rec)
    model.options = model.options.with_(http=replace(model.options.http, stream=stream))
    if not stream:
        rec.responses[0] = httpx.Response(200, json=openai_json("first answer"))
    agent = Agent(engine(model, "s"), env)
    agent.run_turn("one")
    before = list(agent.messages)
    if expect == "ok":
        assert agent.run_turn("two").answer.strip() == "fine"
        return
    with pytest.raises(ModelError, match=expect):
        agent.run_turn("two")
    assert agent.messages == before


def test_unreadable_tool_arguments_go_back_to_the_model(env: ToolEnv, tmp_path: Path) -> None:
    rec = Recorder(sse(openai_sse("", CALL, bad_args=True)), sse(openai_sse("sorry")))
    shown: list[str] = []
    env = replace(env, emit=lambda event: shown.append(progress_line(event)))
    agent = Agent(engine(_model(tmp_path, rec), "s"), env)
    result = agent.run_turn("go")
    assert "→ read_file(arguments that could not be read)" in shown
    sent = json.loads(rec.requests[1].content)["messages"]
    assert "not valid JSON" in sent[-1]["content"] and sent[-1]["role"] == "tool"
    assert sent[-2]["tool_calls"][0]["function"]["arguments"] == "{}"  # what any server accepts
    assert result.answer.strip() == "sorry"
    assert [t.ok for t in result.tools] == [False]


def test_a_call_cut_at_the_output_limit_says_so(env: ToolEnv, tmp_path: Path) -> None:
    """llama-server, SmolLM2, max_tokens 80: the second call's arguments stop half-way."""
    first = openai_sse("", CALL, bad_args=True).replace(b'"tool_calls"}', b'"length"}')
    assert b'"finish_reason": "length"' in first
    rec = Recorder(sse(first), sse(openai_sse("sorry")))
    agent = Agent(engine(_model(tmp_path, rec), "s"), env)
    agent.run_turn("go")
    sent = json.loads(rec.requests[1].content)["messages"][-1]["content"]
    assert "cut at the output limit" in sent and "not valid JSON" in sent


def test_unknown_tool_name_goes_back_to_the_model(env: ToolEnv, tmp_path: Path) -> None:
    rec = Recorder(sse(openai_sse("", [("c1", "delete_everything", {})])), sse(openai_sse("sorry")))
    agent = Agent(engine(_model(tmp_path, rec), "s"), env)
    result = agent.run_turn("go")
    sent = json.loads(rec.requests[1].content)["messages"][-1]
    assert sent["role"] == "tool" and "unknown tool 'delete_everything'" in sent["content"]
    assert result.answer.strip() == "sorry"


def test_connection_refused(env: ToolEnv, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    agent = Agent(engine(_model(tmp_path, None, f"http://127.0.0.1:{port}"), "s"), env)
    with pytest.raises(ModelError, match="cannot reach"):
        agent.run_turn("hello")
    assert agent.messages == []
