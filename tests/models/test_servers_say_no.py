"""Servers that say no are never failed quietly (issue 46, item 4): a base URL with no
Responses API gets Chat Completions, said once and kept for the session; a refused reasoning
effort goes to the nearest one the server takes, said with the values it takes, or stops with
them. The strict fake (tests/strict_server.py) answers as the real servers do."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mca.assembly.wiring import model_options
from mca.errors import ModelError
from mca.models import build_model
from mca.models.effort import allowed_efforts, nearest_effort
from mca.models.fallback import ChatFallback
from mca.models.responses import ResponsesModel
from mca.models.retry import RetryPolicy
from mca.tools import tool_specs
from mca.types import Message, Request
from tests.fakeserver import Received, Reply, serve
from tests.helpers import settings_for
from tests.models.test_reasoning import Seen, model_for, openai
from tests.models.wire import through
from tests.ptyscreen import MCA, child_env
from tests.strict_server import StrictServer

ASK = Request("be brief", (Message("user", "hi"),), tool_specs(), 512)
OPENAI_WORDS = "Supported values are: 'low', 'medium', and 'high'."
GPT_5_1_WORDS = (  # as OpenAI answered in anomalyco/opencode#4451
    "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values"
    " are: 'none', 'low', 'medium', and 'high'."
)
FAST = RetryPolicy(base=0.01, sleep=lambda s: None)


class Paths(Seen):
    """A strict server that keeps the path of every request, too."""

    def __init__(self, rules: StrictServer) -> None:
        super().__init__()
        self.rules = rules
        self.paths: list[str] = []

    def __call__(self, received: Any) -> Any:
        self.paths.append(received.path)
        return super().__call__(received)


def test_a_base_url_without_the_responses_api_gets_chat_completions(tmp_path: Path) -> None:
    settings = settings_for("openai", tmp_path, server="http://127.0.0.1:9", MCA_MODEL="gpt-5")
    options = model_options(settings)
    assert options.wire == "responses" and isinstance(build_model(options), ChatFallback)
    seen, notices = Paths(StrictServer(chat_only=True)), list[str]()
    model = ChatFallback(options, notices.append, transport=through(seen), policy=FAST)
    assert model.wire == "responses"
    first = model.complete(ASK)
    assert model.wire == "chat"  # what /model says after it (Session.wire)
    assert first.message.tool_calls and first.message.tool_calls[0].name == "list_dir"
    model.complete(ASK)
    assert seen.paths == ["/v1/responses", "/v1/chat/completions", "/v1/chat/completions"]
    assert len(notices) == 1 and "has no Responses API (HTTP 404" in notices[0]


def test_the_providers_own_url_keeps_the_responses_api(tmp_path: Path) -> None:
    options = model_options(settings_for("openai", tmp_path, MCA_MODEL="gpt-5"))
    assert isinstance(build_model(options), ResponsesModel)


def test_a_missing_model_on_chat_is_still_an_error(tmp_path: Path) -> None:
    settings = settings_for("openai", tmp_path, server="http://127.0.0.1:9", MCA_MODEL="gpt-5")

    def nothing(received: Received) -> Reply:
        error = {"error": {"message": "model 'gpt-5' not found"}}
        return Reply(404, {"content-type": "application/json"}, [json.dumps(error).encode()])

    model = ChatFallback(model_options(settings), transport=through(nothing), policy=FAST)
    with pytest.raises(ModelError, match="not found"):
        model.complete(ASK)


@pytest.mark.parametrize("wire", ["chat", "responses"])
def test_a_refused_effort_goes_to_the_nearest_the_server_takes(tmp_path: Path, wire: str) -> None:
    seen, notices = Seen(), list[str]()
    settings = openai(tmp_path, "o3", MCA_WIRE=wire, MCA_REASONING="minimal")
    model = model_for(settings, through(seen), notices)
    model.complete(ASK)
    assert len(seen.rules.refused) == 1 and "does not support 'minimal'" in seen.rules.refused[0]
    sent = seen.bodies[-1].get("reasoning_effort") or seen.bodies[-1]["reasoning"]["effort"]
    assert sent == "low"
    assert notices == [
        "the server does not take reasoning effort 'minimal' for o3 (it takes low, medium,"
        " high): sent again with 'low', the nearest"
    ]


def test_a_refused_effort_with_no_values_named_stops_and_says_them(tmp_path: Path) -> None:
    def refuse(received: Received) -> Reply:
        error = {"error": {"message": "Unsupported value: 'reasoning_effort' for this model."}}
        return Reply(400, {"content-type": "application/json"}, [json.dumps(error).encode()])

    model = model_for(
        openai(tmp_path, "o3", MCA_WIRE="chat", MCA_REASONING="xhigh"), through(refuse)
    )
    with pytest.raises(ModelError, match=r"refused reasoning effort 'xhigh'.*--reasoning \(none,"):
        model.complete(ASK)


def test_a_server_that_takes_no_effort_at_all_gets_none(tmp_path: Path) -> None:
    seen, notices = Seen(), list[str]()
    settings = settings_for(
        "openai", tmp_path, server="http://127.0.0.1:9", MCA_MODEL="local-model",
        MCA_WIRE="chat", MCA_REASONING="high",
    )  # fmt: skip
    model = model_for(settings, through(seen), notices)
    model.complete(ASK)  # a model mca does not know is sent the effort: its server refuses it
    assert "reasoning_effort" in seen.bodies[0] and "reasoning_effort" not in seen.bodies[-1]
    assert notices == ["the server takes no reasoning effort: sent without"]


@pytest.mark.parametrize(
    ("detail", "allowed", "wanted", "nearest"),
    [
        (OPENAI_WORDS, ("low", "medium", "high"), "minimal", "low"),
        ("must be one of none, low, medium, high", ("none", "low", "medium", "high"), "minimal",
         "low"),
        (OPENAI_WORDS, ("low", "medium", "high"), "xhigh", "high"),
        (GPT_5_1_WORDS, ("none", "low", "medium", "high"), "minimal", "low"),
        ("nothing said", (), "", ""),
    ],
)  # fmt: skip
def test_allowed_efforts_are_read_from_the_error(
    detail: str, allowed: tuple[str, ...], wanted: str, nearest: str
) -> None:
    assert allowed_efforts(detail) == allowed
    if allowed:
        assert nearest_effort(wanted, allowed) == nearest


@pytest.mark.e2e
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_mca_p_against_a_chat_only_server_answers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = StrictServer(script=(), answer="Hello from chat.", chat_only=True)
    with serve(rules) as srv:
        env = child_env(
            ws, MCA_PROVIDER="openai", MCA_MODEL="gpt-5", MCA_BASE_URL=f"{srv.url}/v1",
            MCA_API_KEY="sk-chat-only-0123456789",
        )  # fmt: skip
        done = subprocess.run(
            [str(MCA), "-p", "hi"], cwd=ws, env=env, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 0, done.stderr
    assert "Hello from chat." in done.stdout
    assert done.stderr.count("has no Responses API") == 1


def test_a_model_switched_to_at_the_same_base_url_starts_on_chat(tmp_path: Path) -> None:
    from mca.models.fallback import carried

    here = settings_for("openai", tmp_path, server="http://127.0.0.1:9", MCA_MODEL="gpt-5")
    there = settings_for("openai", tmp_path, server="http://127.0.0.1:8", MCA_MODEL="gpt-5")
    seen = Paths(StrictServer(chat_only=True))
    old = ChatFallback(model_options(here), transport=through(seen), policy=FAST)
    nxt = model_options(here).with_(model="gpt-5-mini")
    assert carried(old, nxt).wire == "responses"  # nothing learnt yet
    old.complete(ASK)
    assert carried(old, nxt).wire == "chat"
    assert carried(old, model_options(there)).wire == "responses"  # another server
