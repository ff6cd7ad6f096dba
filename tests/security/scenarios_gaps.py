"""Scenarios for what issue 23 left open: a compressed answer held to its cap as it inflates,
and the one-shot commands' own output passing the scrubber."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tracemalloc
import zlib
from collections.abc import Iterator

from mca.cli import main
from tests.fakeserver import Reply
from tests.models.wire import openai_json
from tests.security.scenarios import scenario
from tests.security.scenarios_keys import MIB, server
from tests.security.world import CONFIG_KEY, PLANTED, World


def _gzip(pieces: Iterator[bytes]) -> list[bytes]:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [packer.compress(p) for p in pieces]
    return [b"".join(out) + packer.flush()]


def _bomb(size: int, streamed: bool) -> Reply:
    """`size` bytes of answer in well under 1% of that on the wire."""
    if streamed:
        line = b"data: " + json.dumps({"choices": [{"delta": {"content": "Z" * 4096}}]}).encode()
        body = _gzip(line + b"\n\n" for _ in range(size // 4200))
        kind = "text/event-stream"
    else:
        head, tail = json.dumps(openai_json("@")).encode().split(b"@")
        body = _gzip(iter([head, *(b"Z" * MIB for _ in range(size // MIB)), tail]))
        kind = "application/json"
    assert len(body[0]) < size // 100
    return Reply(headers={"content-type": kind, "content-encoding": "gzip"}, chunks=body)


def _peak_while(w: World, *flags: str) -> int:
    tracemalloc.start()
    try:
        with server(w):
            assert w.oneshot("hi", *flags, MCA_MAX_RESPONSE_BYTES=str(MIB)) == 1
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@scenario
def gzip_bomb_answer_is_refused_before_it_inflates(w: World) -> None:
    w.replies = [_bomb(96 * MIB, streamed=False)]
    peak = _peak_while(w, "--no-stream")
    assert "1 MiB" in w.printed and "MCA_MAX_RESPONSE_BYTES" in w.printed
    assert peak < 12 * MIB, f"{peak / MIB:.0f} MiB held for a 1 MiB cap"


@scenario
def gzip_bomb_stream_is_refused_before_it_inflates(w: World) -> None:
    w.replies = [_bomb(96 * MIB, streamed=True)]
    peak = _peak_while(w)
    assert "1 MiB" in w.printed
    assert peak < 12 * MIB, f"{peak / MIB:.0f} MiB held for a 1 MiB cap"


@scenario
def an_encoding_mca_did_not_ask_for_is_refused(w: World) -> None:
    for coding in ("br", "gzip"):  # brotli it cannot read; a gzip that is not gzip
        reply = Reply(headers={"content-type": "application/json", "content-encoding": coding})
        w.replies = [Reply(reply.status, reply.headers, [b"\x8b\x01not what it says"])]
        with server(w):
            assert w.oneshot("hi", "--no-stream") == 1
        assert coding in w.outputs[-1] or "damaged" in w.outputs[-1], w.outputs[-1]
    assert all(r.headers.get("accept-encoding") == "gzip, deflate" for r in w.sent)


def _command(w: World, *argv: str) -> int:
    """`mca ARGV...` in-process, as a person would type it; stdout and stderr are kept."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv), w.env(MOCK="1"))
    w.outputs += [out.getvalue(), err.getvalue()]
    return code


@scenario
def one_shot_commands_scrub_what_they_print(w: World) -> None:
    """A key the user once pasted into a skill (and into a sentence) is shown by `mca skills`
    and `mca ledger compare` as [REDACTED], like everything a turn prints."""
    key, config_key = PLANTED["OPENAI_API_KEY"], CONFIG_KEY
    skill = w.ws / ".agents" / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: release\ndescription: Release with token {key} and {config_key}.\n---\n"
        f"Run `publish --token {key}`.\n"
    )
    ws = str(w.ws)
    runs = [
        ("skills", "list", "-C", ws),
        ("skills", "list", "-C", ws, "--json"),
        # $release: "release" alone is an everyday word, not a mention (issue 24)
        ("skills", "why", "-C", ws, f"$release it with {key}"),
        ("skills", "why", "-C", ws, "--json", "$release it"),
        ("skills", "check", str(skill)),
        ("ledger", "compare", "-C", ws, f"$release it with {config_key}"),
        ("ledger", "compare", "-C", ws, "--json", "$release it"),
    ]
    for argv in runs:
        assert _command(w, *argv) == 0, (argv, w.outputs[-1])
    assert w.printed.count("[REDACTED]") >= 6  # shown, scrubbed (the oracle: never the key)
    for secret in (key, config_key):  # not even the start of one, where a column cuts it
        assert secret[:12] not in w.printed, secret[:12]
    # The planted file is this scenario's own, and the parse cache is its private copy (0600,
    # in $MCA_HOME, checked against the file on every read); both go before the oracle looks
    # for keys in everything else mca wrote.
    shutil.rmtree(skill)
    for cached in w.mcahome.glob("cache/skills-*.json"):
        assert key in cached.read_text() and oct(cached.stat().st_mode & 0o777) == "0o600"
        cached.unlink()
