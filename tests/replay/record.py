"""Record real model-server traffic for the replay tests (see fixtures/recorded/README.md).

    python -m tests.replay.record --target http://127.0.0.1:8080 --server "..." --dir NAME

starts a recording proxy and, for each scenario in SCENARIOS, runs mca with MCA_BASE_URL
pointing at the proxy and writes fixtures/recorded/NAME/SCENARIO.json: every request mca sent
(method, path, JSON body) and the server's exact answer (status, content type, the body as the
chunks it arrived in). No headers are kept, so no key can end up in a fixture.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "recorded"
# The settings a replay must repeat to send the same requests (never a key: none is kept).
REPLAYED_ENV = (
    "MCA_PROVIDER",
    "MCA_MODEL",
    "MCA_CONTEXT_WINDOW",
    "MCA_MAX_TOKENS",
    "MCA_MAX_STEPS",
)


def serve(target: str, exchanges: list[dict[str, Any]]) -> http.server.ThreadingHTTPServer:
    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            chunks: list[str] = []
            with (
                httpx.Client(timeout=600) as client,
                client.stream(
                    method,
                    target + self.path,
                    content=body,
                    headers={"content-type": "application/json"},
                ) as resp,
            ):
                self.send_response(resp.status_code)
                kind = resp.headers.get("content-type", "")
                self.send_header("content-type", kind)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for chunk in resp.iter_raw():
                    chunks.append(chunk.decode("utf-8", "replace"))
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            exchanges.append(
                {
                    "request": {
                        "method": method,
                        "path": self.path,
                        "json": json.loads(body) if body else None,
                    },
                    "response": {
                        "status": resp.status_code,
                        "content_type": kind,
                        "chunks": chunks,
                    },
                }
            )

        def do_POST(self) -> None:
            self._forward("POST")

        def do_GET(self) -> None:
            self._forward("GET")

        def log_message(self, *args: Any) -> None:
            return None

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            return None  # mca closing a kept-alive connection as it exits: not news

    host = urlsplit(target)
    assert host.scheme == "http"
    server = Server(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# name: (mca's arguments after the workspace, settings beside the base ones; None unsets one)
SCENARIOS: dict[str, tuple[list[str], dict[str, str | None]]] = {
    "text-answer": (["-p", "Say hello in five words.", "--no-stream"], {}),
    "streamed-answer": (["-p", "Name three colors."], {}),
    "tool-call": (
        ["-p", "Use the list_dir tool to list the files.", "--yes"],
        {"MCA_MAX_STEPS": "4", "MCA_MAX_TOKENS": "80"},
    ),
    "length-cutoff": (
        ["-p", "Write a long story about a cat.", "--no-stream"],
        {"MCA_MAX_TOKENS": "3"},
    ),
    "context-overflow": (["-p", "Summarise @big.txt", "--no-stream"], {}),
    "window-from-server": (["-p", "Say hello.", "--no-stream"], {"MCA_CONTEXT_WINDOW": None}),
    "empty-reply": (
        ["-p", "Use the list_dir tool to list the files.", "--no-stream"],
        {"MCA_MAX_TOKENS": "80"},
    ),
    # for llama-cpp-python's function-calling format, which cannot stream with tools
    "stream-with-tools-unsupported": (
        ["-p", "Name three colors."],
        {"MCA_MAX_TOKENS": "80", "MCA_MAX_STEPS": "4"},
    ),
}
# What each scenario must show, in mca's --json output and the exchanges: a small model answers
# at random, so the recorder tries again until it does, and the replay test asks the same.
Out = dict[str, Any]
Exchanges = list[dict[str, Any]]


def _refused_then_unstreamed(out: Out, exchanges: Exchanges) -> bool:
    """llama-cpp-python's function-calling format, streaming a reply with a tool call in it,
    ends the stream with no event in it; mca sends the request again unstreamed, and the turn
    goes on (this small model calls list_dir until the step limit)."""
    first, *rest = exchanges
    said = "".join(first["response"]["chunks"])
    refused = first["request"]["json"]["stream"] and "data:" not in said
    again = bool(rest) and all(not e["request"]["json"]["stream"] for e in rest)
    return refused and again and out["error"] is None and bool(out["tool_calls"])


WANT: dict[str, Callable[[Out, Exchanges], bool]] = {
    "text-answer": lambda out, _: (
        bool(out["answer"]) and out["ledger"]["provider_prompt_tokens"] > 0
    ),
    "streamed-answer": lambda out, _: bool(out["answer"]),
    "tool-call": lambda out, _: bool(out["tool_calls"]),
    "length-cutoff": lambda out, _: "output limit" in (out["notice"] or ""),
    "context-overflow": lambda out, _: "still too long after compacting" in (out["error"] or ""),
    "window-from-server": lambda out, _: out["ledger"]["window"] == 2048,
    "empty-reply": lambda out, _: "empty answer" in (out["notice"] or "") and not out["tool_calls"],
    "stream-with-tools-unsupported": _refused_then_unstreamed,
}


def wanted(name: str, stdout: str, exchanges: Exchanges) -> bool:
    try:
        return WANT[name.rsplit("/", 1)[-1]](json.loads(stdout), exchanges)
    except (ValueError, KeyError, TypeError, IndexError):
        return False


BASE_ENV = {"MCA_MODEL": "smollm2", "MCA_CONTEXT_WINDOW": "2048"}


def workspace(where: Path) -> Path:
    """The workspace every scenario runs in (the replay test builds the same one)."""
    ws = where / "rws"
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(OUT.parents[0] / "workspace", ws)
    (ws / "big.txt").write_text("word " * 12000 + "\n")
    return ws


def record(
    target: str, name: str, server: str, command: list[str], env: dict[str, str], tries: int
) -> None:
    for attempt in range(1, tries + 1):
        exchanges: list[dict[str, Any]] = []
        proxy = serve(target.rstrip("/"), exchanges)
        url = f"http://127.0.0.1:{proxy.server_address[1]}/v1"
        proc = subprocess.run(
            command, env={**env, "MCA_BASE_URL": url}, capture_output=True, text=True, timeout=1800
        )
        proxy.shutdown()
        if wanted(name, proc.stdout, exchanges):
            break
        print(f"{name}: try {attempt}/{tries} did not show it", file=sys.stderr)
    else:
        print(f"{name}: not recorded (no try showed it)", file=sys.stderr)
        return
    saved = {
        "server": server,
        "command": command,
        "env": {k: env[k] for k in REPLAYED_ENV if k in env},
        "exit_code": proc.returncode,
        "stdout": proc.stdout,
        "exchanges": exchanges,
    }
    path = OUT / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(saved, indent=1) + "\n")
    print(f"{name}: {len(exchanges)} exchange(s), mca exited {proc.returncode}")
    sys.stderr.write(proc.stderr[-2000:])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True, help="the real server, e.g. http://127.0.0.1:8080")
    p.add_argument("--server", required=True, help="what produced the traffic (kept in the file)")
    p.add_argument("--provider", choices=["openai", "anthropic"], default="openai")
    p.add_argument("--dir", required=True, help="where under fixtures/recorded/ the files go")
    p.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="default: every one")
    p.add_argument("--mca", default=str(Path(sys.executable).parent / "mca"))
    p.add_argument("--tries", type=int, default=10, help="runs per scenario until it shows")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(Path(tmp))
        home = {"HOME": tmp, "MCA_HOME": f"{tmp}/home", "PATH": os.environ["PATH"]}
        for name in args.only or sorted(SCENARIOS):
            argv, extra = SCENARIOS[name]
            env = {**home, **BASE_ENV, "MCA_PROVIDER": args.provider, **extra}
            env = {k: v for k, v in env.items() if v is not None}
            command = [args.mca, "-C", str(ws), *argv, "--json"]
            record(args.target, f"{args.dir}/{name}", args.server, command, env, args.tries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
