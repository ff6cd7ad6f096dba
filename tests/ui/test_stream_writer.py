"""The one stream writer both faces use: secrets held back across pieces, control characters
made visible unless raw, a line end after the reply, Markdown when asked."""

from __future__ import annotations

import io

from mca.ui.markdown import MarkdownStream
from mca.ui.stream import StreamWriter

KEY = "sk-live-0123456789abcdef"


def test_a_key_split_across_pieces_never_gets_through() -> None:
    out = io.StringIO()
    w = StreamWriter(out, [KEY])
    for piece in ("use sk-live-0123", "456789abcdef now", " please"):
        w.feed(piece)
    assert w.end() and KEY not in out.getvalue() and out.getvalue().endswith("please\n")


def test_controls_are_visible_unless_raw() -> None:
    shown, raw = io.StringIO(), io.StringIO()
    for out, is_raw in ((shown, False), (raw, True)):
        w = StreamWriter(out, [], raw=is_raw)
        w.feed("a\x1b[2Jb\n")
        w.end()
    assert "\x1b" not in shown.getvalue() and raw.getvalue() == "a\x1b[2Jb\n"


def test_end_adds_a_line_end_once_and_only_after_a_reply() -> None:
    out = io.StringIO()
    w = StreamWriter(out, [])
    assert not w.end() and out.getvalue() == ""
    w.feed("one")
    assert w.streamed and w.end() and not w.streamed
    w.feed("two\n")
    w.end()
    assert out.getvalue() == "one\ntwo\n"


def test_markdown_is_rendered_per_reply() -> None:
    out = io.StringIO()
    made: list[MarkdownStream] = []

    def new() -> MarkdownStream:
        made.append(MarkdownStream(80))
        return made[-1]

    w = StreamWriter(out, [], markdown=new)
    for reply in ("# Title\n", "**bold**"):
        w.feed(reply)
        w.end()
    assert len(made) == 2 and "# Title" not in out.getvalue() and "Title" in out.getvalue()


def test_it_knows_when_the_cursor_waits_at_the_right_margin() -> None:
    """The queued note under a streaming answer is not drawn while the last line fills the
    screen's width exactly: moving the cursor there would lose the next character's wrap."""
    w = StreamWriter(io.StringIO(), [], markdown=lambda: MarkdownStream(None))
    w.feed("x" * 9)
    assert not w.at_margin(10)
    w.feed("**中**")  # bold (styles take no cells), a wide letter: two cells
    assert w.at_margin(11) and not w.at_margin(10)
    w.feed("\nyy")
    assert not w.at_margin(11) and w.at_margin(2)
    w.end()
    assert not w.at_margin(2)
