"""Record real model-server traffic for the replay tests (see fixtures/recorded/README.md).

    python -m tests.replay.record --target http://127.0.0.1:8765 --name SCENARIO -- mca ARGS...

starts a recording proxy, runs the command with MCA_BASE_URL pointing at the proxy, and writes
fixtures/recorded/SCENARIO.json: every request mca sent (method, path, JSON body) and the
server's exact answer (status, content type, the body as the chunks it arrived in). No headers
are kept, so no key can end up in a fixture.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import subprocess
import sys
import threading
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

    host = urlsplit(target)
    assert host.scheme == "http"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--server", default="llama-cpp-python", help="what produced the traffic")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    exchanges: list[dict[str, Any]] = []
    proxy = serve(args.target.rstrip("/"), exchanges)
    url = f"http://127.0.0.1:{proxy.server_address[1]}/v1"
    env = {**os.environ, "MCA_BASE_URL": url}
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    proxy.shutdown()
    record = {
        "server": args.server,
        "command": command,
        "env": {k: os.environ[k] for k in REPLAYED_ENV if k in os.environ},
        "exit_code": proc.returncode,
        "stdout": proc.stdout,
        "exchanges": exchanges,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{args.name}.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"{args.name}: {len(exchanges)} exchange(s), mca exited {proc.returncode}")
    sys.stderr.write(proc.stderr[-2000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
