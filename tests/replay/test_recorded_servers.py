"""Real servers' exact bytes, replayed: mca against traffic recorded from llama.cpp's
llama-server (OpenAI and Anthropic endpoints) and llama-cpp-python's server, both running
SmolLM2-135M-Instruct (see fixtures/recorded/README.md to re-record)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.replay.record import SCENARIOS, wanted, workspace
from tests.replay.server import RECORDED, serve_replay

MCA = Path(sys.executable).parent / "mca"
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not MCA.exists(), reason="mca not installed"),
    pytest.mark.slow,  # the installed mca against recorded servers
]
# none could be drawn from the model (empty-reply); a failure only that server has (streaming)
LLAMA_CPP_PYTHON_ONLY = ("empty-reply", "stream-with-tools-unsupported")
# mca now refuses, before sending, a prompt its own estimate says cannot fit the window it was
# told (issue 46). The overflow scenario is recorded with a 2,048 window: replayed, mca is told a
# larger one, so the prompt goes out and the server's own refusal, as recorded, is what it meets
# (as with a server whose real window is smaller than the one configured).
REPLAYED_WITH = {"context-overflow": {"MCA_CONTEXT_WINDOW": "131072"}}
RECORDINGS = sorted(
    p.relative_to(RECORDED).with_suffix("").as_posix() for p in RECORDED.rglob("*.json")
)


@pytest.mark.parametrize("name", RECORDINGS)
def test_replayed_scenario(name: str, tmp_path: Path) -> None:
    server, replay = serve_replay(name)
    try:
        record = replay.record
        argv = list(record["command"])
        i = argv.index("-C")
        argv[0], argv[i + 1] = str(MCA), str(workspace(tmp_path))
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "MCA_HOME": str(tmp_path / "home"),
            "MCA_BASE_URL": f"{server.url}/v1",
            "MCA_RETRY_BASE": "0.01",
            **record["env"],  # the settings it was recorded with
            **REPLAYED_WITH.get(name.rsplit("/", 1)[-1], {}),
        }
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    finally:
        server.stop()
    assert replay.surprises == [], replay.surprises
    assert replay.served == len(replay.exchanges)
    assert proc.returncode == record["exit_code"], proc.stderr
    got, want = json.loads(proc.stdout), json.loads(record["stdout"])
    for key in ("answer", "stopped", "notice"):
        assert got.get(key) == want.get(key), key
    # an error says what it said then, and may go on to say what to do
    assert (got.get("error") or "").startswith(want.get("error") or ""), got.get("error")
    assert bool(got.get("error")) == bool(want.get("error"))
    assert [t["name"] for t in got["tool_calls"]] == [t["name"] for t in want["tool_calls"]]
    assert wanted(name, proc.stdout, replay.exchanges), got
    assert wanted(name, record["stdout"], replay.exchanges)  # what it is for was recorded


def test_every_server_is_recorded() -> None:
    servers = {"llama-cpp-python", "llama-server-openai", "llama-server-anthropic"}
    assert {name.split("/")[0] for name in RECORDINGS} == servers
    for server in ("llama-server-openai", "llama-server-anthropic"):  # both protocols, in full
        assert {n for n in RECORDINGS if n.startswith(server + "/")} == {
            f"{server}/{scenario}"
            for scenario in SCENARIOS
            if scenario not in LLAMA_CPP_PYTHON_ONLY
        }
