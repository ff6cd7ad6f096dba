"""End to end: the installed `mca -p ... --json` against fakellm, a fake model server we did
not write, on a loopback port, for both wire protocols."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

BIN = Path(sys.executable).parent
FAKELLM = BIN / "fakellm"
MCA = BIN / "mca"
KEY = "sk-e2e-planted-key-0123456789"
PROVIDER_KEY = "sk-e2e-provider-key-never-sent-42"
pytestmark = [
    pytest.mark.xdist_group("fakellm"),  # its session fixture: built on one worker
    pytest.mark.e2e,
    pytest.mark.skipif(
        not FAKELLM.exists() or not MCA.exists(), reason="fakellm or mca not installed"
    ),
    pytest.mark.slow,  # the installed mca against a fake server
]

RULES = """
version: 1
rules:
  - name: rate_limited
    when: {messages_contain: "flaky request", turn_in: [1, 2]}
    respond: {status: 429, error: "slow down"}
  - name: after_rate_limit
    when: {messages_contain: "flaky request"}
    respond: {content: "Recovered after two 429s."}
  - name: always_500
    when: {messages_contain: "broken server"}
    respond: {status: 500, error: "internal failure"}
  - name: answer_from_file
    when: {messages_contain: "what does notes.txt say", tool_result_contains: "MAGIC-42"}
    respond: {content: "The file says MAGIC-42."}
  - name: read_the_file
    when: {messages_contain: "what does notes.txt say"}
    respond:
      tool_calls:
        - {name: read_file, arguments: {path: notes.txt}}
  - name: parallel_done
    when: {messages_contain: "do two things", tool_result_contains: "PARALLEL-FILE"}
    respond: {content: "Both tools ran."}
  - name: parallel_start
    when: {messages_contain: "do two things"}
    respond:
      tool_calls:
        - {name: read_file, arguments: {path: parallel.txt}}
        - {name: list_dir, arguments: {path: ".", depth: 1}}
  - name: unauthorized
    when: {messages_contain: "unauthorized please"}
    respond: {status: 401, error: "invalid api key"}
  - name: default
    respond: {content: "default answer"}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")  # once a run: xdist may put other tests between its own
def fakellm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    d = tmp_path_factory.mktemp("fakellm")
    (d / "rules.yaml").write_text(RULES)
    port = _free_port()
    proc = subprocess.Popen(
        [
            str(FAKELLM),
            "serve",
            "--config",
            str(d / "rules.yaml"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=d,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "FAKELLM_CONFIG": str(d / "rules.yaml")},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            if httpx.get(f"{url}/_fakellm/stats", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("fakellm did not start")
        time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def stats(url: str) -> dict[str, Any]:
    stats: dict[str, Any] = httpx.get(f"{url}/_fakellm/stats", timeout=5).json()
    return stats


def run_mca(
    url: str, provider: str, ws: Path, sentence: str, *extra: str, output: str = "--json"
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(ws.parent),
        "MCA_HOME": str(ws.parent / "home"),
        "MCA_PROVIDER": provider,
        "MCA_MODEL": "gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5",
        "MCA_BASE_URL": f"{url}/v1" if provider == "openai" else url,
        # a custom base URL gets only the key configured for it; the provider's own key
        # (planted here) must never be sent there
        "MCA_API_KEY": KEY,
        ("OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"): PROVIDER_KEY,
        "MCA_RETRY_BASE": "0.05",
    }
    return subprocess.run(
        [str(MCA), "-C", str(ws), "-p", sentence, *output.split(), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [True, False])
def test_read_file_then_answer_from_the_tool_result(
    fakellm: str, ws: Path, provider: str, stream: bool
) -> None:
    (ws / "notes.txt").write_text("the code is MAGIC-42\n")
    before = stats(fakellm)["by_rule"].get("answer_from_file", 0)
    extra = () if stream else ("--no-stream",)
    proc = run_mca(
        fakellm, provider, ws, f"what does notes.txt say? ({provider}, {stream})", *extra
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"].strip() == "The file says MAGIC-42."
    assert [t["name"] for t in out["tool_calls"]] == ["read_file"] and out["tool_calls"][0]["ok"]
    # the server matched its after-tool rule: the tool result really went back
    assert stats(fakellm)["by_rule"]["answer_from_file"] == before + 1
    # fakellm's OpenAI stream sends no usage chunk (mca asks for one); everything else does
    assert out["usage"]["reported_by_provider"] is (provider == "anthropic" or not stream)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_stream_json_over_the_wire(fakellm: str, ws: Path, provider: str) -> None:
    """The events of a streamed turn, as a real wire streams it: the answer rebuilt from its
    text deltas, the tool call and its result, no key in any line."""
    (ws / "notes.txt").write_text("the code is MAGIC-42\n")
    sentence = f"what does notes.txt say? (stream-json, {provider})"
    proc = run_mca(fakellm, provider, ws, sentence, output="--output-format stream-json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["type"] == "session.start" and lines[0]["provider"] == provider
    assert [r["name"] for r in lines if r["type"] == "tool.call"] == ["read_file"]
    last = max(i for i, r in enumerate(lines) if r["type"] == "tool.result")
    deltas = [r["text"] for r in lines[last:] if r["type"] == "text.delta"]
    assert "".join(deltas).strip() == "The file says MAGIC-42." == lines[-1]["answer"].strip()
    assert [r["type"] for r in lines[-2:]] == ["usage", "turn.end"]
    assert KEY not in proc.stdout and PROVIDER_KEY not in proc.stdout


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_two_parallel_tool_calls(fakellm: str, ws: Path, provider: str) -> None:
    (ws / "parallel.txt").write_text("PARALLEL-FILE\n")
    proc = run_mca(fakellm, provider, ws, f"do two things ({provider})")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [t["name"] for t in out["tool_calls"]] == ["read_file", "list_dir"]
    assert out["answer"].strip() == "Both tools ran."


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_429_twice_then_success(fakellm: str, ws: Path, provider: str) -> None:
    # fakellm answers error statuses only to non-streamed requests (its stream is always 200)
    proc = run_mca(fakellm, provider, ws, f"flaky request ({provider})", "--no-stream")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"].strip() == "Recovered after two 429s."
    assert proc.stderr.count("HTTP 429") == 2


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_500_that_never_clears(fakellm: str, ws: Path, provider: str) -> None:
    proc = run_mca(fakellm, provider, ws, f"broken server ({provider})", "--no-stream")
    assert proc.returncode == 1
    assert "HTTP 500" in proc.stderr and "internal failure" in proc.stderr
    assert KEY not in proc.stderr and KEY not in proc.stdout
    report = json.loads(proc.stdout)  # --json prints its object for a failed turn too
    assert "HTTP 500" in report["error"] and report["answer"] == ""


def test_record_then_replay_offline(fakellm: str, ws: Path, tmp_path: Path) -> None:
    (ws / "notes.txt").write_text("the code is MAGIC-42\n")
    record = tmp_path / "session.jsonl"
    proc = run_mca(
        fakellm, "openai", ws, "what does notes.txt say? (record)", "--record", str(record)
    )
    assert proc.returncode == 0, proc.stderr
    text = record.read_text()
    assert KEY not in text and len(text.splitlines()) == 2
    replay = subprocess.run(
        [str(MCA), "-C", str(ws), "-p", "anything", "--json"],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "MCA_MOCK_SCRIPT": str(record)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout)["answer"].strip() == "The file says MAGIC-42."


def test_planted_key_appears_in_no_artifact(fakellm: str, ws: Path, tmp_path: Path) -> None:
    """Every file a session writes, and everything it prints, is searched for the key."""
    (ws / "notes.txt").write_text("the code is MAGIC-42\n")
    record = tmp_path / "rec.jsonl"
    outputs = []
    for sentence, extra in (
        ("what does notes.txt say? (secrets)", ("--record", str(record), "--ledger")),
        ("unauthorized please", ("--no-stream",)),
        ("broken server (secrets)", ("--no-stream",)),
    ):
        proc = run_mca(fakellm, "openai", ws, sentence, *extra)
        outputs += [proc.stdout, proc.stderr]
    assert "invalid api key" in outputs[3] and "MCA_API_KEY" in outputs[3]
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(ws.parent),
        "MCA_HOME": str(ws.parent / "home"),
        "OPENAI_API_KEY": KEY,
        "MCA_BASE_URL": f"{fakellm}/v1",
        "MCA_MODEL": "gpt-4o-mini",
    }
    repl = subprocess.run(
        [str(MCA), "-C", str(ws)],
        input="/model\n/exit\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    outputs += [repl.stdout, repl.stderr]
    assert "no API key" in repl.stdout  # OPENAI_API_KEY is not sent to a custom base URL
    artifacts = [
        record,
        *(p for p in (ws.parent / "home").rglob("*") if p.is_file()),
    ]
    assert not (ws / ".mca").exists()
    assert any(p.suffix == ".jsonl" for p in artifacts)  # session logs were written
    leaks = [str(p) for p in artifacts for k in (KEY, PROVIDER_KEY) if k.encode() in p.read_bytes()]
    leaks += [
        f"output {i}" for i, text in enumerate(outputs) for k in (KEY, PROVIDER_KEY) if k in text
    ]
    assert leaks == []
