"""One sanitiser for every piece of untrusted text shown on a terminal, and one scrubber for
every byte that leaves the process.

File contents, command output, file names, tool arguments, model text, skill text and error
messages that quote them may carry escape sequences that clear the screen, set the title, write
the clipboard (OSC 52) or rewrite a line so it shows something other than what runs. `visible`
turns every control character into something printable: C0 as caret notation (ESC is `^[`), DEL
as `^?`, C1 and the bidirectional overrides as `\\x9b` / `\\u202e`, and lone surrogates (from
undecodable file names) as `\\udcff`. Newlines and tabs stay.

`scrub` replaces every known key (`Settings.secrets`: each `*_API_KEY` variable and config.toml's
`api_key`, in every form `mca.config.apikeys.secret_forms` gives) with [REDACTED];
`StreamScrubber` does it for text that arrives in pieces, `scrub_data` for a JSON value. Every
way out goes through them: the terminal (`for_terminal`, the stream writer), -p's stdout and
stderr, --json, the error line and the crash report of the command line, the session log, saved
sessions, the REPL history, --record files, and every request sent to a model.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

__all__ = [
    "CUT_CHARS",
    "EXCERPT_CHARS",
    "MAX_APPROVAL_LINES",
    "REDACTED",
    "ScrubbedWriter",
    "StreamScrubber",
    "command_block",
    "exact",
    "exact_line",
    "excerpt",
    "file_line",
    "for_terminal",
    "one_line",
    "scrub",
    "scrub_data",
    "scrubbed_stdio",
    "valid_text",
    "visible",
]

_TABLE: dict[int, str] = {i: "^" + chr(i + 64) for i in range(32) if chr(i) not in "\n\t"}
_TABLE[0x7F] = "^?"
_TABLE.update({i: f"\\x{i:02x}" for i in range(0x80, 0xA0)})
_TABLE.update(
    {i: f"\\u{i:04x}" for i in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)}
)
_TABLE.update({i: f"\\u{i:04x}" for i in range(0xD800, 0xE000)})
# Characters that draw nothing but change what a line says: zero-width space and joiners'
# invisible cousins, the byte-order mark, the Arabic letter mark, line and paragraph separators
# (which some terminals break lines at) and the Unicode tag block (invisible ASCII look-alikes).
_INVISIBLE = (0x200B, *range(0x2060, 0x2065), 0xFEFF, 0x061C, 0x2028, 0x2029, 0x180E)
_TABLE.update({i: f"\\u{i:04x}" for i in _INVISIBLE})
_TABLE.update({i: f"\\U{i:08x}" for i in range(0xE0000, 0xE0080)})
# Shown only where exactness matters more than looks (what a command runs): the joiners and
# variation selectors emoji use, the soft hyphen, and every space that is not U+0020.
# Beyond those: every character that takes no cell of its own on a terminal (combining and
# format characters, controls, unassigned and private code points, Hangul fillers), found by
# its Unicode category when first seen, so nothing in an approval draws on or hides in another.
_NO_CELL = frozenset({"Mn", "Me", "Mc", "Cf", "Cc", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
_FILLERS = (
    range(0x1160, 0x1200),
    range(0xD7B0, 0xD800),
    range(0x3164, 0x3165),
    range(0xFFA0, 0xFFA1),
)
_MAX_CACHED = 65_536  # distinct characters remembered; past that each is judged again


def _code(i: int) -> str:
    return f"\\u{i:04x}" if i <= 0xFFFF else f"\\U{i:08x}"


class _ExactTable(dict[int, str]):
    """str.translate's table for `exact`: the fixed entries, then each other character judged
    by its category the first time it is seen."""

    def __missing__(self, i: int) -> str:
        import unicodedata

        c = chr(i)
        no_cell = unicodedata.category(c) in _NO_CELL or any(i in r for r in _FILLERS)
        shown = _code(i) if no_cell and c not in "\n\t " else c
        if len(self) < _MAX_CACHED:
            self[i] = shown
        return shown


_EXACT = _ExactTable(_TABLE)
_EXACT.update({i: f"\\u{i:04x}" for i in (0x200C, 0x200D, 0x00AD, *range(0xFE00, 0xFE10))})
_EXACT.update({i: f"\\u{i:04x}" for i in (0x00A0, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)})
_EXACT.update({i: f"\\U{i:08x}" for i in range(0xE0100, 0xE01F0)})
# undecodable bytes of a file name (surrogateescape) show as the byte they were
_BYTES = {i: f"\\x{i - 0xDC00:02x}" for i in range(0xDC80, 0xDD00)}
_TABLE.update(_BYTES)
_SURROGATES = {i: "\ufffd" for i in range(0xD800, 0xE000)} | _BYTES


def visible(text: str) -> str:
    """The text with every control character made visible (newline and tab kept)."""
    return text.translate(_TABLE)


def valid_text(text: str) -> str:
    """Text that encodes as UTF-8: undecodable file-name bytes as \\xNN, other lone surrogates
    as U+FFFD. Everything a tool returns passes this before it reaches a log or a model."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.translate(_SURROGATES)
    return text


def one_line(text: str) -> str:
    """`visible`, with newlines and tabs shown as \\n and \\t too (for a single line)."""
    return visible(text).replace("\n", "\\n").replace("\t", "\\t")


EXCERPT_CHARS = 300  # how much of a server's answer or an error a one-line message quotes


def excerpt(value: object) -> str:
    """The start of `str(value)`, short enough to quote in a one-line message."""
    return str(value)[:EXCERPT_CHARS]


REDACTED = "[REDACTED]"
CUT_CHARS = 16  # the start of a key this long counts as the key (shorter ones are shared)


def scrub(text: str, secrets: Iterable[str], *, cut: bool = False) -> str:
    """Replace every secret (of useful length) in text. `cut`: text someone else cut short
    (a student's crash message) may hold the start of a key: a start of CUT_CHARS or more is
    replaced too."""
    for s in secrets:
        if s and len(s) >= 8 and s in text:
            text = text.replace(s, REDACTED)
        if cut and len(s) > CUT_CHARS and s[:CUT_CHARS] in text:
            for n in range(len(s) - 1, CUT_CHARS - 1, -1):  # the longest start first
                text = text.replace(s[:n], REDACTED)
    return text


def scrub_data(value: Any, secrets: Iterable[str], *, cut: bool = False) -> Any:
    """A JSON-like value with every string in it (keys of objects too) scrubbed."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return scrub(value, secrets, cut=cut)
    if isinstance(value, dict):
        return {
            scrub_data(k, secrets, cut=cut): scrub_data(v, secrets, cut=cut)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub_data(v, secrets, cut=cut) for v in value]
    return value


def for_terminal(text: str, secrets: Iterable[str] = ()) -> str:
    """Untrusted text as it may be shown: secrets scrubbed, control characters visible."""
    return visible(scrub(text, secrets))


MAX_APPROVAL_LINES = 200  # a longer command is refused: it could not be read before a yes


def exact(text: str) -> str:
    """`visible`, and every invisible or look-alike character as its code (for commands)."""
    return text.translate(_EXACT)


def command_block(command: str, indent: str = "    ") -> str:
    """A command exactly as it will run, one line of it per line, nothing hidden: control and
    invisible characters as codes, tabs as \\t, a run of three or more spaces and spaces at a
    line's ends counted, empty lines named. Several lines are numbered."""
    lines = command.split("\n")
    out = []
    for n, line in enumerate(lines, 1):
        shown = _edges(exact(line).replace("\t", "\\t"))
        number = f"{n:>3} | " if len(lines) > 1 else ""
        out.append(indent + number + (shown or "(empty line)"))
    return "\n".join(out)


def _count(m: re.Match[str]) -> str:
    return f"[{len(m.group())} spaces]" if len(m.group()) > 1 else "[space]"


def _edges(line: str) -> str:
    """Spaces a reader could miss, counted: runs of 3+, and any at the start or end."""
    line = re.sub(r" {3,}", _count, line)
    line = re.sub(r"^ +| +$", _count, line)
    return line


def exact_line(text: str) -> str:
    """`exact` on one line: newlines and tabs as \\n and \\t too (tool lines, paths)."""
    return exact(text).replace("\n", "\\n").replace("\t", "\\t")


def file_line(line: str) -> str:
    """One line of a file as a diff shows it: `exact`, tabs as \\t, spaces at its end counted
    (a terminal shows them as nothing), so every character of the line can be read."""
    return re.sub(r" +$", _count, exact(line).replace("\t", "\\t"))


class StreamScrubber:
    """Scrubs a stream that arrives in pieces: a secret split across two pieces is still
    caught, because a tail that could be the start of a secret is held back until the next
    piece (or `flush`) shows what it is."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = tuple(s for s in secrets if len(s) >= 8)
        self.held = ""

    def feed(self, piece: str) -> str:
        text = scrub(self.held + piece, self.secrets)
        keep = 0
        for s in self.secrets:
            for n in range(min(len(s) - 1, len(text)), keep, -1):
                if text.endswith(s[:n]):
                    keep = n
                    break
        self.held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        out, self.held = self.held, ""
        return out


class ScrubbedWriter(io.TextIOBase):
    """A text stream (stdout, stderr) that passes everything written to it through a
    StreamScrubber; `close_out` writes what is still held back."""

    def __init__(self, target: TextIO, secrets: Iterable[str]) -> None:
        super().__init__()
        self.target, self.scrubber = target, StreamScrubber(secrets)

    def write(self, text: str) -> int:
        self.target.write(self.scrubber.feed(text))
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def close_out(self) -> None:
        self.target.write(self.scrubber.flush())
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()


@contextlib.contextmanager
def scrubbed_stdio(secrets: Iterable[str]) -> Iterator[None]:
    """sys.stdout and sys.stderr scrubbed for the block (the one-shot commands' output)."""
    secrets = tuple(secrets)
    saved = sys.stdout, sys.stderr
    out, err = ScrubbedWriter(saved[0], secrets), ScrubbedWriter(saved[1], secrets)
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        out.close_out()
        err.close_out()
