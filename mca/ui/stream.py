"""The one writer of an answer as it streams, for the REPL and for -p."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TextIO

from mca.text.sanitize import StreamScrubber, visible

if TYPE_CHECKING:  # -p never renders Markdown: it need not import prompt_toolkit
    from mca.ui.markdown import MarkdownStream, Wrapper


class StreamWriter:
    """One reply's text as it arrives: known secrets never get through (a key split across two
    pieces is held back until the next shows what it is), control characters are made visible
    unless `raw` (an answer piped to a program goes as sent), a Markdown renderer may draw it,
    and `end` leaves the next output at the start of a line."""

    def __init__(
        self,
        out: TextIO,
        secrets: Iterable[str],
        *,
        raw: bool = False,
        markdown: Callable[[], MarkdownStream] | None = None,
        columns: Callable[[], int | None] | None = None,
    ) -> None:
        self.out = out
        self.secrets = tuple(secrets)
        self.raw = raw
        self.new_markdown = markdown  # a renderer per reply (it may read the terminal's width)
        self.columns = columns  # without a renderer: the terminal's width, to break between words
        self.streamed = False  # a reply is on its way and not yet ended
        self.ends_line = False  # what was written of it ends with a newline
        self._scrubber = StreamScrubber(self.secrets)
        self._markdown: MarkdownStream | None = None
        self._wrap: Wrapper | None = None
        self.tail = ""  # what was written of the reply's last line (styles included)

    def _safe(self, text: str) -> str:
        return text if self.raw else visible(text)

    def feed(self, delta: str) -> None:
        """A piece of the reply: scrubbed, made safe, rendered, written."""
        self.out.write(self.piece(delta))
        self.out.flush()

    def piece(self, delta: str) -> str:
        """A piece of the reply, scrubbed, made safe and rendered, for the caller to write
        (with what goes around it on the screen, in one write: nothing flickers)."""
        if not self.streamed:
            self.streamed, self.ends_line, self.tail = True, False, ""
            self._scrubber = StreamScrubber(self.secrets)
            self._markdown = self.new_markdown() if self.new_markdown else None
            self._wrap = self._wrapper() if self._markdown is None else None
        safe = self._safe(self._scrubber.feed(delta))
        shown = self._markdown.feed(safe) if self._markdown else safe
        shown = self._wrap.feed(shown) if self._wrap else shown
        self.tail = (self.tail + shown).rsplit("\n", 1)[-1]
        self.ends_line = safe.endswith("\n") if safe else self.ends_line
        return shown

    def end(self) -> bool:
        """After the reply's last piece: what was held back, and a line end. False when no
        reply was streaming."""
        if not self.streamed:
            return False
        rest = self._safe(self._scrubber.flush())
        ends_line = rest.endswith("\n") if rest else self.ends_line
        if self._markdown is not None:
            rest = self._markdown.feed(rest) + self._markdown.finish()
        elif self._wrap is not None:
            rest = self._wrap.feed(rest) + self._wrap.finish()
        self.out.write(rest if ends_line else rest + "\n")
        self.out.flush()
        self.streamed, self.tail = False, ""
        return True

    def _wrapper(self) -> Wrapper | None:
        """Plain text on a terminal (-p, NO_COLOR) broken between words at its width, as the
        rendered answer is."""
        columns = self.columns() if self.columns else None
        if not columns:
            return None
        from mca.ui.markdown import Wrapper

        return Wrapper(columns)

    def at_margin(self, columns: int) -> bool:
        """Does the reply's last line fill the screen's width exactly (the cursor waits at the
        right margin, and moving it would lose the wrap a next character makes)?"""
        from mca.ui.ansi import SGR
        from mca.ui.livebox import width

        cells = width(SGR.sub("", self.tail))
        return cells > 0 and cells % columns == 0
