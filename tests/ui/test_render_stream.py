"""Streaming output pieces: Markdown rendering, key scrubbing across pieces, the spinner line."""

from __future__ import annotations

import io
import re
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prompt_toolkit.utils import get_cwidth

from mca.text.sanitize import REDACTED, StreamScrubber, visible
from mca.ui.markdown import MarkdownStream
from mca.ui.spinner import Spinner

OURS = re.compile(r"\x1b\[[0-9;]*m")
SAMPLE = (
    "# Title\n\nSome **bold**, *it*, `code`, 2 * 3.\n\n- a\n* b\n1. c\n> quote\n\n"
    "```sh\necho **x** `y`\n```\n---\nend *open"
)
pieces = st.text(alphabet="#*`-> \n1.abc_~", max_size=80)


def render(chunks: list[str], width: int | None = None) -> str:
    m = MarkdownStream(width)
    return "".join(m.feed(c) for c in chunks) + m.finish()


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


widths = st.sampled_from([None, 20, 27, 80])
prose = st.text(alphabet="ab漢 \n*`-#1.", max_size=200)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(pieces, st.lists(st.integers(0, 200), max_size=12), widths)
def test_pieces_render_exactly_as_the_whole(text: str, cuts: list[int], width: int | None) -> None:
    assert render(split(text, cuts), width) == render([text], width)


@pytest.mark.parametrize(
    "text",
    ["1.  x", "#  Title", "  > quote", "- - -\n", "***\n", "  ```\ncode\n  ```\n", "-***-"],
)
def test_a_line_start_renders_the_same_wherever_the_stream_is_cut(text: str) -> None:
    # a marker's blanks are greedy, and a rule or fence needs its whole line: `1. ` alone must
    # wait, since `1.  x` is the item `x` (found by the property above, once in ten runs)
    for width in (None, 20):
        whole = render([text], width)
        for cut in range(1, len(text)):
            assert render([text[:cut], text[cut:]], width) == whole, (cut, width)
    assert OURS.sub("", render(["1. ", " x"])) == "1. x"


@settings(max_examples=300, deadline=None)
@given(prose, st.sampled_from([20, 27]))
def test_wrapped_lines_fit_and_keep_every_word(text: str, width: int) -> None:
    wrapped, plain = OURS.sub("", render([text], width)), OURS.sub("", render([text]))
    assert wrapped.split() == plain.split()  # the same words, in the same order
    for line in wrapped.splitlines():
        words = line.split()
        if words and re.fullmatch(r"•|\d+[.)]", words[0]):
            words = words[1:]  # a list marker
        # wider than the terminal only for a word that fits no line (code is never wrapped)
        assert "│" in line or sum(map(get_cwidth, line)) <= width or len(words) == 1, line


@settings(max_examples=300, deadline=None)
@given(pieces)
def test_only_our_own_styles_are_added_and_every_word_survives(text: str) -> None:
    out = render([text])
    plain = OURS.sub("", out)
    assert "\x1b" not in plain  # nothing but SGR styles of our own
    for word in re.findall(r"[abc1_~]+", text):
        assert word.strip("_~") in plain or not word.strip("_~")


def test_the_sample_renders_as_a_person_expects() -> None:
    out = OURS.sub("", render([SAMPLE]))
    assert out.startswith("Title\n\nSome bold, it, code, 2 * 3.\n\n• a\n• b\n1. c\n│ quote\n")
    assert "  ┌ sh\n  │ echo **x** `y`\n  └\n" in out  # code stays as written
    assert out.endswith("─" * 40 + "\nend open")


def test_text_streams_at_once_except_undecided_markers() -> None:
    m = MarkdownStream()
    assert m.feed("Hello wor") == "Hello wor"  # a plain line is written as it comes
    assert m.feed("ld\n#") == "ld\n"  # '#' may start a heading: held
    assert "Head" in m.feed(" Head")


def test_a_key_split_across_pieces_is_still_scrubbed() -> None:
    key = "sk-live-0123456789abcdef"
    for cut in range(1, len(key)):
        s = StreamScrubber([key])
        text = "a " + key[:cut]
        out = s.feed(text) + s.feed(key[cut:] + " b") + s.flush()
        assert key not in out and out == f"a {REDACTED} b"
    s = StreamScrubber([key])
    assert s.feed("sk-live") == "" and s.feed(" is a prefix") == "sk-live is a prefix"


def test_visible_then_markdown_cannot_smuggle_escapes() -> None:
    hostile = "**x** \x1b]52;c;AAAA\x07 \x1b[2J"
    out = render([visible(hostile)])
    assert "\x1b]" not in out and "\x1b[2J" not in out and "^[]52" in out


def test_spinner_line_counts_down_a_retry_then_says_it_was_sent() -> None:
    sp = Spinner(io.StringIO(), threading.RLock())
    sp.started = 100.0
    sp.set_state("HTTP 429, retrying in 4.0 s (2/5)")
    at = sp.state_at
    assert sp.line(at + 0.5, 0).endswith("· HTTP 429, retrying in 4 s (2/5)")
    assert sp.line(at + 3.5, 1).endswith("· HTTP 429, retrying in 1 s (2/5)")
    assert sp.line(at + 5, 2).endswith("· HTTP 429; retry 2/5 sent")
    sp.set_state("connection refused")
    assert sp.line(sp.state_at, 3).endswith("· connection refused")


def test_spinner_clears_its_line_when_stopped() -> None:
    out = io.StringIO()
    sp = Spinner(out, threading.RLock())
    sp.start()
    sp._stop.wait(0.5)  # let it draw at least once
    sp.stop()
    text = out.getvalue()
    assert "waiting for the model" in text and text.endswith("\r\x1b[K")
    sp.stop()  # a second stop is harmless


def test_wrapping_keeps_list_indents_and_leaves_code_alone() -> None:
    text = (
        "- a list item that is long enough to wrap onto a second line\n"
        "```\nthis_is_code = 'never wrapped, however far past the edge it goes'\n```\n"
    )
    out = OURS.sub("", render([text], 30))
    assert out.startswith("• a list item that is long\n  enough to wrap onto a second\n  line\n")
    assert "  │ this_is_code = 'never wrapped, however far past the edge it goes'\n" in out
