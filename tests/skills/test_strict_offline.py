"""--strict-skills refuses before mca asks any model server anything (issue 35 item 5), proved
against fakellm, a fake model server we did not write: its access log is the oracle (its stats
count only the chat requests it matched, not a probe for the context window)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

BIN = Path(sys.executable).parent
FAKELLM, MCA = BIN / "fakellm", BIN / "mca"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not FAKELLM.exists() or not MCA.exists(), reason="fakellm or mca not installed"
    ),
]
RULES = 'version: 1\nrules:\n  - name: default\n    respond: {content: "server answered"}\n'


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """fakellm on a free loopback port; (its URL, its access log)."""
    (tmp_path / "rules.yaml").write_text(RULES)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    log = tmp_path / "access.log"
    with log.open("w") as out:
        argv = [str(FAKELLM), "serve", "--config", "rules.yaml", "--host", "127.0.0.1"]
        proc = subprocess.Popen([*argv, "--port", str(port)], cwd=tmp_path, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while not _answers(url):
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail("fakellm did not start")
            time.sleep(0.1)
        yield url, log
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/_fakellm/stats", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _requests(log: Path) -> list[str]:
    """Every request fakellm logged, but the test's own look at its stats."""
    lines = log.read_text().splitlines()
    return [x for x in lines if '"' in x and "HTTP/1.1" in x and "/_fakellm/" not in x]


def _run(url: str, ws: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(ws.parent),
        "MCA_HOME": str(ws.parent / "home"),
        "MCA_PROVIDER": "openai",
        "MCA_MODEL": "local-model",  # a window no record knows: mca would ask the server
        "MCA_BASE_URL": f"{url}/v1",
        "MCA_API_KEY": "sk-local",
    }
    argv = [str(MCA), "-C", str(ws), "--strict-skills", "-p", "hi"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


def test_strict_skills_refuses_before_any_request(server: tuple[str, Path], tmp_path: Path) -> None:
    url, log = server
    ws = tmp_path / "ws"
    skill = ws / ".agents" / "skills" / "bad"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: bad\n---\nno description\n")
    refused = _run(url, ws)
    assert refused.returncode == 1 and "--strict-skills" in refused.stderr
    assert "missing-description" in refused.stderr
    assert _requests(log) == []  # not a chat request, not even a probe for the window
    # the same session with the skill mended does reach the server (the oracle can see)
    (skill / "SKILL.md").write_text("---\nname: bad\ndescription: Use when x.\n---\nbody\n")
    ok = _run(url, ws)
    assert ok.returncode == 0 and "server answered" in ok.stdout, ok.stderr
    assert any("/v1/chat/completions" in x for x in _requests(log))
