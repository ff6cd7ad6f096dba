"""Markdown for the terminal, rendered as it streams in: what is on screen is never redrawn.

Text is written as soon as it arrives (word by word when it is wrapped to the terminal's
width), except the few characters whose meaning the next piece decides (the start of a line:
a heading, list item, quote or code fence; a `*` that may be `**`). Headings are bold, emphasis
is italic or bold, inline code is cyan, fenced code blocks are set apart by a bar and left
exactly as written (never wrapped), list bullets become • and their wrapped lines keep the
item's indent. Input must already be made safe (`visible`): this module only adds escape
sequences of its own.
"""

from __future__ import annotations

import re

from prompt_toolkit.utils import get_cwidth

from mca.ui.ansi import BOLD, CYAN, DIM, ITALIC, RESET, SGR

CODE = CYAN
_FENCE = re.compile(r" {0,3}(```+|~~~+)(.*)")
_HEADING = re.compile(r" {0,3}(#{1,6})[ \t]+")
_BULLET = re.compile(r"( *)[-*+][ \t]+")
_ORDERED = re.compile(r"( *)(\d{1,9}[.)])[ \t]+")
_QUOTE = re.compile(r" {0,3}>[ \t]?")
_RULE = re.compile(r" {0,3}([-*_])[ \t]*(\1[ \t]*){2,}$")
# Every start of a line that more text could still turn into a different block: a marker's
# blank run is greedy (`1.  x` is `1.` then `x`), and a rule or fence needs its whole line.
_OPEN_START = re.compile(
    r" *"  # nothing but an indent yet
    r"| {0,3}(`{1,2}|~{1,2})"  # a fence not yet three long
    r"| {0,3}#{1,6}[ \t]*"  # a heading's marker
    r"| *[-*+][ \t]*"  # a bullet
    r"| *\d{1,9}([.)][ \t]*)?"  # an ordered item's number
    r"| {0,3}>"  # a quote, whose one optional blank is still to come
    r"| {0,3}([-*_])[ \t]*(\3[ \t]*)*"  # a rule
)
CODE_BAR = f"{DIM}  │{RESET} "  # starts every line of a fenced code block


class MarkdownStream:
    """feed(piece) -> terminal text for it; finish() -> the rest."""

    def __init__(self, width: int | None = None) -> None:
        self.wrap = Wrapper(width) if width else None  # word-wrap at this many columns
        self.pending = ""  # undecided text at the start of a line, or a trailing '*'
        self.at_line_start = True
        self.fence = ""  # the open code fence, or ''
        self.line_style = ""  # a heading's style, for the rest of its line
        self.code = self.bold = self.italic = False
        self.prev = " "  # the last character written within the line

    # -- the public interface ----------------------------------------------------------------
    def feed(self, piece: str) -> str:
        self.pending += piece
        out: list[str] = []
        while self.pending:
            if self.at_line_start:
                if not self._line_start(out, final=False):
                    break
            elif not self._scan(out, final=False):
                break
        return self.wrap.feed("".join(out)) if self.wrap else "".join(out)

    def finish(self) -> str:
        out: list[str] = []
        while self.pending:
            if self.at_line_start:
                self._line_start(out, final=True)
            else:
                self._scan(out, final=True)
        out.append(self._close_line())
        return self.wrap.feed("".join(out)) + self.wrap.finish() if self.wrap else "".join(out)

    # -- the start of a line ---------------------------------------------------------------
    def _line_start(self, out: list[str], final: bool) -> bool:
        """Decide what the line is; False when more text is needed to know."""
        text = self.pending
        nl = text.find("\n")
        line = text if nl < 0 else text[:nl]
        complete = nl >= 0 or final
        if self.fence:
            if not complete and _may_close(line, self.fence):
                return False  # it may be the closing fence
            m = _FENCE.match(line)
            if m and m.group(1).startswith(self.fence) and not m.group(2).strip():
                out.append(f"{DIM}  └{RESET}")
                self.fence = ""
                self._consume_line(out, nl)
                return True
            out.append(CODE_BAR)
            self.at_line_start = False
            return True
        if not complete and _undecided(line):
            return False
        m = _FENCE.match(line)
        if m and complete:
            self.fence = m.group(1)[0] * 3
            label = m.group(2).strip()
            out.append(f"{DIM}  ┌{(' ' + label) if label else ''}{RESET}")
            self._consume_line(out, nl)
            return True
        if m and not complete:
            return False  # the fence's info string is still coming
        if complete and _RULE.match(line):
            out.append(f"{DIM}{'─' * 40}{RESET}")
            self._consume_line(out, nl)
            return True
        for rx, render in (
            (_HEADING, self._heading),
            (_BULLET, lambda m: f"{m.group(1)}• "),
            (_ORDERED, lambda m: f"{m.group(1)}{m.group(2)} "),
            (_QUOTE, lambda m: f"{DIM}│{RESET} "),
        ):
            mm = rx.match(line)
            if mm:
                out.append(render(mm))
                self.pending = text[mm.end() :]
                break
        self.at_line_start = False
        return True

    def _heading(self, m: re.Match[str]) -> str:
        self.line_style = BOLD
        return BOLD

    def _consume_line(self, out: list[str], nl: int) -> None:
        self.pending = self.pending[nl + 1 :] if nl >= 0 else ""
        out.append("\n")
        self.at_line_start = True

    # -- within a line -----------------------------------------------------------------------
    def _scan(self, out: list[str], final: bool) -> bool:
        """Write the line's text up to its end or to a '*' the next piece decides."""
        text = self.pending
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\n":
                self._text(out, text[:i])
                out.append(self._close_line() + "\n")
                self.prev = " "
                self.pending = text[i + 1 :]
                self.at_line_start = True
                return True
            if self.fence:
                i += 1
                continue
            if c == "`":
                self._text(out, text[:i])
                self.code = not self.code
                out.append(CODE if self.code else RESET + self._styles())
                text, i = text[i + 1 :], 0
                continue
            if c == "*" and not self.code:
                if i + 1 >= len(text) and not final:
                    self._text(out, text[:i])
                    self.pending = text[i:]
                    return False  # '*' or '**': the next piece says
                if text.startswith("**", i):
                    self._text(out, text[:i])
                    self.bold = not self.bold
                    out.append(BOLD if self.bold else RESET + self._styles())
                    text, i = text[i + 2 :], 0
                    continue
                before = text[i - 1] if i else self.prev
                after = text[i + 1] if i + 1 < len(text) else " "
                opens = not self.italic and before.isspace() and not after.isspace()
                closes = self.italic and not before.isspace()
                if opens or closes:
                    self._text(out, text[:i])
                    self.italic = not self.italic
                    out.append(ITALIC if self.italic else RESET + self._styles())
                    text, i = text[i + 1 :], 0
                    continue
            i += 1
        self._text(out, text)
        self.pending = ""
        return True

    def _text(self, out: list[str], text: str) -> None:
        # `prev` decides whether a '*' opens emphasis: it must not depend on where pieces end
        if text:
            out.append(text)
            self.prev = text[-1]

    def _styles(self) -> str:
        """The escape sequences of the styles still open (after a RESET closed one)."""
        return (
            self.line_style
            + (BOLD if self.bold else "")
            + (ITALIC if self.italic else "")
            + (CODE if self.code else "")
        )

    def _close_line(self) -> str:
        """The end of a line: every inline style and a heading's style end with it."""
        open_ = self.code or self.bold or self.italic or self.line_style
        self.code = self.bold = self.italic = False
        self.line_style = ""
        return RESET if open_ else ""


def _undecided(line: str) -> bool:
    """Whether more text could still change what the start of this line is."""
    return _OPEN_START.fullmatch(line) is not None


def _may_close(line: str, fence: str) -> bool:
    """Whether this start of a line in a code block could still be its closing fence."""
    rest = line.lstrip(" ")
    return rest.startswith(fence[:1]) or (not rest and len(line) <= 3)


_SGR_PREFIX = re.compile(r"\x1b(\[[0-9;]*)?$")
_LIST_MARK = re.compile(r" *(•|\d{1,9}[.)])")


class Wrapper:
    """Word-wraps rendered text at `width` columns as it streams: a word is written once it is
    whole, on the next line when it would cross the edge, and a list item's lines keep their
    hanging indent. Code lines are never wrapped. What comes out depends only on the text, never
    on how it was cut into pieces."""

    def __init__(self, width: int) -> None:
        self.width = max(width, 20)
        self.col = 0
        self.indent = 0  # where a wrapped line of this paragraph starts
        self.word: list[str] = []  # the word being read, with its style sequences
        self.word_cols = 0
        self.pending = ""  # the start of a style sequence or of a code bar, not yet whole
        self.line_start = True
        self.code = False  # this line is code: written as it is
        self.words_in_line = 0
        self.spaces = 0  # spaces read since the last word

    def feed(self, text: str) -> str:
        out: list[str] = []
        text, self.pending = self.pending + text, ""
        i = 0
        while i < len(text):
            if self.line_start:
                rest = text[i:]
                if CODE_BAR.startswith(rest) and len(rest) < len(CODE_BAR):
                    self.pending = rest  # it may be a code bar
                    break
                self.code = rest.startswith(CODE_BAR)
                self.line_start = False
            c = text[i]
            if c == "\n":
                self._flush(out)
                out.append("\n")
                self.col = self.indent = self.words_in_line = self.spaces = 0
                self.line_start, self.code = True, False
            elif self.code:
                out.append(c)
            elif c == "\x1b":
                m = SGR.match(text, i)
                if m is None and _SGR_PREFIX.match(text, i):
                    self.pending = text[i:]
                    break
                seq = m.group() if m else c
                self.word.append(seq)
                i += len(seq)
                continue
            elif c == " ":
                self._flush(out)
                self.spaces += 1  # written before the next word, if it goes on this line
            else:
                self.word.append(c)
                self.word_cols += get_cwidth(c)
            i += 1
        return "".join(out)

    def finish(self) -> str:
        out: list[str] = [self.pending]
        self.pending = ""
        self._flush(out)
        return "".join(out)

    def _flush(self, out: list[str]) -> None:
        if not self.word:
            return
        word = "".join(self.word)
        if self.col > self.indent and self.col + self.spaces + self.word_cols > self.width:
            out.append("\n" + " " * self.indent)  # the spaces before it become the break
            self.col = self.indent
        else:
            out.append(" " * self.spaces)
            self.col += self.spaces
        self.spaces = 0
        out.append(word)
        self.col += self.word_cols
        if self.words_in_line == 0 and _LIST_MARK.fullmatch(SGR.sub("", word)):
            self.indent = self.col + 1  # a list item: its lines start after the marker
        self.words_in_line += 1
        self.word, self.word_cols = [], 0
