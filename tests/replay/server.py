"""A replay server for recorded real-server traffic (fixtures/recorded/*.json).

It answers each request with the next recorded response, byte for byte, after checking that
the request has the recorded shape (method, path, stream or not, tools offered or not, the
roles of its messages, whether it bounds the answer); anything unexpected is answered with a
599 and noted in `surprises`, so a test fails loudly instead of replaying the wrong answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakeserver import FakeServer, Received, Reply

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "recorded"


def shape(method: str, path: str, body: Any) -> dict[str, Any]:
    """What a request must look like to get a recorded answer."""
    body = body if isinstance(body, dict) else {}
    return {
        "method": method,
        "path": path.split("?")[0],
        "stream": bool(body.get("stream")),
        "tools": bool(body.get("tools")),
        "tool_choice": body.get("tool_choice"),
        "roles": [m.get("role") for m in body.get("messages", []) if isinstance(m, dict)],
        "bounded": "max_tokens" in body,
    }


class Replay:
    """The recorded exchanges of one scenario, served in order."""

    def __init__(self, name: str) -> None:
        self.record = json.loads((RECORDED / f"{name}.json").read_text())
        self.exchanges = list(self.record["exchanges"])
        self.surprises: list[str] = []
        self.served = 0

    def __call__(self, request: Received) -> Reply:
        if self.served >= len(self.exchanges):
            self.surprises.append(f"request {self.served + 1}: nothing more was recorded")
            return Reply(status=599, chunks=[b"replay: no more recorded exchanges"])
        recorded = self.exchanges[self.served]
        want = shape(
            **{k: recorded["request"][k] for k in ("method", "path")},
            body=recorded["request"]["json"],
        )
        got = shape(request.method, request.path, request.json if request.body else None)
        self.served += 1
        if got != want:
            self.surprises.append(f"request {self.served}: expected {want}, got {got}")
            return Reply(status=599, chunks=[b"replay: unexpected request"])
        response = recorded["response"]
        chunks = [c.encode("utf-8") for c in response["chunks"]]
        return Reply(
            status=response["status"],
            headers={"content-type": response["content_type"]},
            chunks=chunks,
        )


def serve_replay(name: str) -> tuple[FakeServer, Replay]:
    replay = Replay(name)
    server = FakeServer(replay)
    server.start()
    return server, replay
