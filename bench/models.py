"""`make bench` rows for the model wires.

- **Conversation caching**: the input cost of a 30-turn session with Anthropic, with and without
  the rolling cache breakpoint, from the usage mca recorded. The session is a real one (the
  real client, the agent, the tools: three tool calls and an answer per turn) against the strict
  fake (tests/strict_server.py), whose usage follows Anthropic's documented prompt cache
  (tests/prompt_cache.py); priced with claude-sonnet-4-5's rates from the registry.
- **Parse cost per wire**: the real streams in fixtures/cassettes/ (one per wire), from raw bytes
  to the assembled reply (lines, server-sent events, the wire's assembler), per 1,000 events,
  against the reference loop measured alongside. A turn streams hundreds to a few thousand
  events; the goal keeps their parsing far below a model's latency (~20 ms per 1,000).
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.result import Result

REPO = Path(__file__).resolve().parent.parent
TURNS = 30
MODEL = "claude-sonnet-4-5"
Cost = tuple[float, int, int, int]  # input USD; fresh, read and written input tokens
STREAMS = {  # wire: a recorded stream of it
    "chat": "chat-reasoning-content-stream",
    "responses": "responses-summary-stream",
    "messages": "anthropic-thinking-tools-stream",
}


def _session_cost(rolling: bool, tmp: Path) -> Cost:
    """(input USD, fresh, read, written tokens) of a TURNS-turn session."""
    from mca.assembly.assemble import open_session
    from mca.assembly.wiring import model_options
    from mca.config.settings import load_settings
    from mca.models.anthropic import AnthropicModel, request_body
    from mca.session.faces import HeadlessUI
    from mca.types import Request
    from mca.usage import usd
    from tests.models.wire import through
    from tests.strict_server import StrictServer

    class Marked(AnthropicModel):
        """The rolling breakpoint on, or off (only the stable prefix marked, as before it)."""

        def body(self, request: Request, stream: bool) -> dict[str, Any]:
            s = self.options
            return request_body(s.model, s.max_tokens, request, stream, self.thinking, rolling)

    ws = tmp / f"ws-{rolling}"
    shutil.copytree(REPO / "fixtures" / "workspace", ws)
    (ws / "notes.txt").write_text("the code is MAGIC-42\n" * 40)
    env = {
        "MCA_HOME": str(tmp / f"home-{rolling}"),
        "HOME": str(tmp),
        "MCA_PROVIDER": "anthropic",
        "MCA_MODEL": MODEL,
        "MCA_BASE_URL": "http://127.0.0.1:9",
        "MCA_API_KEY": "sk-bench-0123456789abcdef",
    }
    settings = load_settings(env, workspace=ws).with_(skills_dirs=(REPO / "skills",))
    model = Marked(model_options(settings), transport=through(StrictServer(answer="Done.")))
    session = open_session(settings, HeadlessUI(), model=model, log_to_disk=False)
    fresh = read = written = 0
    for turn in range(TURNS):
        result = session.run_turn(f"turn {turn}: what does notes.txt say now?")
        for u in result.request_usage:
            assert u is not None
            read += u.cached_tokens
            written += u.cache_write_tokens
            fresh += u.prompt_tokens - u.cached_tokens - u.cache_write_tokens
    session.close()
    price = settings.providers.prices()[MODEL]
    return usd(price, fresh, read, written, 0), fresh, read, written


def both_ways() -> tuple[Cost, Cost]:
    """The same session with the rolling breakpoint, and without."""
    with tempfile.TemporaryDirectory() as tmp:
        return _session_cost(True, Path(tmp)), _session_cost(False, Path(tmp))


def caching_text() -> str:
    """docs/benchmarks.md's caching figures (`make figures`): the same session, both ways."""
    rolling, fixed = both_ways()
    head = ("fresh input", "read from cache", "written to cache", "input cost")
    lines = [f"{TURNS} turns, {MODEL:<19}" + "".join(f"{h:>18}" for h in head)]
    for label, (cost, *tokens) in (("rolling breakpoint", rolling), ("tools, system only", fixed)):
        cells = [f"{t:,}" for t in tokens] + [f"${cost:.2f}"]
        lines.append(f"{label:<29}" + "".join(f"{c:>18}" for c in cells))
    lines.append(f"the rolling breakpoint: {rolling[0] / fixed[0]:.2f}x the input cost")
    return "\n".join(lines)


def bench_caching(results: list[Result]) -> dict[str, Any]:
    rolling, fixed = both_ways()
    ratio = rolling[0] / fixed[0]
    results.append(
        Result(
            f"input cost, {TURNS}-turn session, Anthropic",
            rolling[0],
            "$",
            fixed[0],
            "tools and system prompt cached only",
            ratio,
            "<= 0.5x",
            ratio <= 0.5,
            f"{MODEL} rates from the registry, usage as mca recorded it (fresh/read/written"
            f" tokens): rolling {rolling[1]:,}/{rolling[2]:,}/{rolling[3]:,}, without"
            f" {fixed[1]:,}/{fixed[2]:,}/{fixed[3]:,}",
        )
    )
    return {"rolling": rolling, "fixed": fixed}


def _raw(name: str) -> tuple[str, str, int]:
    """(the wire, a recorded stream's bytes as the server sent them, its events)."""
    data = json.loads((REPO / "fixtures" / "cassettes" / f"{name}.json").read_text())
    events = data["interactions"][0]["response"]["events"]
    lines = [e if isinstance(e, str) else json.dumps(e, separators=(",", ":")) for e in events]
    return data["wire"], "".join(f"data: {line}\n\n" for line in lines), len(lines)


def _parse_once(wire: str, raw: str) -> float:
    from mca.models import anthropic, openai, responses
    from mca.models.sse import capped_lines, read_stream, sse_events

    module = {"chat": openai, "responses": responses, "messages": anthropic}[wire]
    start = time.perf_counter()
    chunks = (raw[i : i + 4096] for i in range(0, len(raw), 4096))  # as a network delivers it
    read_stream(sse_events(capped_lines(chunks)), module.StreamAssembler(lambda t: None), None)
    return time.perf_counter() - start


def bench_parse(results: list[Result]) -> None:
    from bench.run import REF_NAME, median_of, reference_ms

    for wire, name in STREAMS.items():
        _, raw, n = _raw(name)
        repeat = max(1, 2000 // n)
        samples = []
        for _ in range(15):
            samples.append(sum(_parse_once(wire, raw) for _ in range(repeat)) / repeat)
        per_thousand = statistics.median(samples) / n * 1000 * 1000  # ms per 1,000 events
        ref = median_of(reference_ms, 15)
        ratio = per_thousand / ref
        results.append(
            Result(
                f"parse cost per 1,000 events, {wire} wire",
                per_thousand,
                "ms",
                ref,
                REF_NAME,
                ratio,
                "<= 10x (~20 ms)",
                ratio <= 10,
                f"fixtures/cassettes/{name}.json: {n} recorded events, bytes to reply",
            )
        )
