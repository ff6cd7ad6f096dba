"""Trim recorded provider traffic from other projects' test cassettes into fixtures/cassettes/.

    python -m tests.replay.trim_cassettes --repo pydantic/pydantic-ai=GITDIR \\
        --repo simonw/llm=GITDIR --repo simonw/llm-anthropic=GITDIR

reads each cassette in CASSETTES from a git directory of its project at the recorded commit
(`git show COMMIT:PATH`) and writes NAME.json: the recorded request bodies, and each answer's
status with its JSON body or its stream's events. Trimmed: every header (so no key, cookie,
organisation or project id is kept), and from each streamed event the fields mca does not read
(DROPPED: ids of chunks and items, the model, sequence numbers, obfuscation padding,
timestamps; at the top of an event and of its response). What is kept is as
recorded. fixtures/cassettes/PROVENANCE.md lists where each came from and under which licence.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "cassettes"
DROPPED = {
    "obfuscation",
    "sequence_number",
    "logprobs",
    "system_fingerprint",
    "created",
    "created_at",
    "object",
    "id",
    "item_id",
    "model",
}


class Cassette(NamedTuple):
    repo: str
    commit: str
    path: str
    wire: str  # messages, responses or chat


PAI, PAI_AT = "pydantic/pydantic-ai", "4fda38988f2939fa6ea9cdefcf120693e10ef491"
LLM, LLM_AT = "simonw/llm", "f3f4f29c6e5e623c3776cbf6455dda2345638214"
LLA, LLA_AT = "simonw/llm-anthropic", "3ae428f3b5143cc81da25af0271d8fa55bda3f05"
CASSETTES = {
    "anthropic-thinking-tools-stream": Cassette(
        LLA,
        LLA_AT,
        "tests/cassettes/test_anthropic/"
        "test_fixed_version_tool_chain_with_thinking_display_regression.yaml",
        "messages",
    ),
    "anthropic-thinking-tools": Cassette(
        PAI,
        PAI_AT,
        "tests/models/cassettes/test_anthropic/test_anthropic_tool_with_thinking.yaml",
        "messages",
    ),
    "anthropic-redacted-stream": Cassette(
        PAI,
        PAI_AT,
        "tests/models/cassettes/test_anthropic/"
        "test_anthropic_model_thinking_part_redacted_stream.yaml",
        "messages",
    ),
    "responses-reasoning-tools": Cassette(
        PAI,
        PAI_AT,
        "tests/models/cassettes/test_openai_responses/"
        "test_openai_responses_thinking_with_tool_calls.yaml",
        "responses",
    ),
    "responses-interleaved-reasoning": Cassette(
        LLM,
        LLM_AT,
        "tests/cassettes/test_openai_responses/"
        "test_responses_interleaved_reasoning_between_tool_calls.yaml",
        "responses",
    ),
    "responses-tool-stream": Cassette(
        LLM,
        LLM_AT,
        "tests/cassettes/test_openai_responses/test_responses_tool_use_streaming.yaml",
        "responses",
    ),
    "responses-summary-stream": Cassette(
        PAI,
        PAI_AT,
        "tests/models/cassettes/test_openai_responses/"
        "test_openai_responses_thinking_part_iter.yaml",
        "responses",
    ),
    "chat-reasoning-usage": Cassette(
        PAI,
        PAI_AT,
        "tests/models/cassettes/test_openai/test_reasoning_model_with_temperature.yaml",
        "chat",
    ),
    "chat-reasoning-content-stream": Cassette(
        PAI,
        PAI_AT,
        "tests/models/cassettes/test_deepseek/test_deepseek_model_thinking_stream.yaml",
        "chat",
    ),
}


def _text(raw: Any) -> str:
    if isinstance(raw, bytes):
        with contextlib.suppress(OSError):  # not compressed
            raw = gzip.decompress(raw)
        return str(raw.decode("utf-8"))
    return str(raw)


def _request(recorded: dict[str, Any]) -> Any:
    if "parsed_body" in recorded:
        return recorded["parsed_body"]
    return json.loads(_text(recorded["body"]))


def _slim(event: Any) -> Any:
    if not isinstance(event, dict):
        return event
    return {k: _slim(v) if k == "response" else v for k, v in event.items() if k not in DROPPED}


def _response(recorded: dict[str, Any]) -> dict[str, Any]:
    status = recorded["status"]["code"]
    if "parsed_body" in recorded:
        return {"status": status, "body": recorded["parsed_body"]}
    text = _text(recorded["body"]["string"])
    data = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    if not data:
        return {"status": status, "body": json.loads(text)}
    events = [d if d.strip() == "[DONE]" else _slim(json.loads(d)) for d in data]
    return {"status": status, "events": events}


def trim(name: str, cassette: Cassette, gitdir: str) -> Path:
    import yaml

    blob = subprocess.run(
        ["git", "--git-dir", gitdir, "show", f"{cassette.commit}:{cassette.path}"],
        capture_output=True,
        check=True,
    ).stdout
    recorded = yaml.safe_load(blob)
    out = {
        "source": {"repo": cassette.repo, "commit": cassette.commit, "path": cassette.path},
        "wire": cassette.wire,
        "interactions": [
            {"request": _request(i["request"]), "response": _response(i["response"])}
            for i in recorded["interactions"]
        ],
    }
    path = OUT / f"{name}.json"
    path.write_text(dumps(out), encoding="utf-8")
    return path


def dumps(out: dict[str, Any]) -> str:
    """Indented JSON, with a stream's events one compact line each (as they came)."""
    streams: list[list[Any]] = []
    for i in out["interactions"]:
        if "events" in i["response"]:
            streams.append(i["response"]["events"])
            i["response"]["events"] = f"@@events{len(streams) - 1}@@"
    text = json.dumps(out, indent=1, ensure_ascii=False)
    for n, events in enumerate(streams):
        compact = (json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events)
        lines = ",\n    ".join(compact)
        text = text.replace(f'"@@events{n}@@"', f"[\n    {lines}\n   ]")
    return text + "\n"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--repo", action="append", default=[], help="OWNER/NAME=GITDIR")
    args = p.parse_args()
    gitdirs = dict(r.split("=", 1) for r in args.repo)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, cassette in CASSETTES.items():
        if cassette.repo not in gitdirs:
            print(f"{name}: skipped (no --repo {cassette.repo}=GITDIR)", file=sys.stderr)
            continue
        path = trim(name, cassette, gitdirs[cassette.repo])
        print(f"{name}: {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
