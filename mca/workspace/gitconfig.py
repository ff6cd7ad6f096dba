"""What in a git directory makes git run a program by itself: settings in its configuration
(`core.fsmonitor`, `core.hooksPath`, `!` aliases, filters, `core.sshCommand`, `core.pager` …)
and executable hooks. A repository that has one runs it at the next `git status`, `git diff` or
`git commit` there, with the rights of whoever typed it: after a sandboxed command, mca names
each one the command added (the sandbox keeps existing repositories read-only; a new one it
cannot forbid, since `git init`, `git clone` and `cargo new` are ordinary work).

The configuration is parsed as git parses it (sections, quoted subsections, continuation lines,
quotes and escapes, comments); where a file is not valid configuration git refuses to run at
all, and what was read up to there is reported anyway. Pure but for reading the files.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from mca.workspace.gitsettings import known, runs_program

__all__ = ["CONFIG_FILES", "Danger", "dangers", "known", "parse", "runs_program"]

CONFIG_FILES = ("config", "config.worktree")  # read by git from a git directory
MAX_CONFIG_BYTES = 1 << 20
RACY_NS = 100_000_000  # a file changed this recently may change again within its clock tick
Danger = tuple[str, str]  # (the file, the setting or what the file is)


class _Text:
    """git's reader: "\\r\\n" is a newline."""

    def __init__(self, text: str) -> None:
        self.s = text[1:] if text.startswith("\ufeff") else text
        self.i = 0

    def get(self) -> str:
        if self.i >= len(self.s):
            return ""
        c = self.s[self.i]
        self.i += 1
        if c == "\r" and self.s[self.i : self.i + 1] == "\n":
            self.i += 1
            return "\n"
        return c

    def peek(self) -> str:
        return self.s[self.i : self.i + 1]

    def skip_line(self) -> None:
        while (c := self.get()) and c != "\n":
            pass


def _header(t: _Text) -> str | None:
    """After '[': 'section' or 'section.subsection' (None: not a header git accepts)."""
    name = ""
    while (c := t.get()) and (c.isalnum() or c in "-."):
        name += c.lower()
    if c == "]":
        return name or None
    if c not in " \t" or not name:
        return None
    while (c := t.get()) in (" ", "\t"):
        pass
    if c != '"':
        return None
    sub = ""
    while (c := t.get()) != '"':
        if not c or c == "\n":
            return None
        if c == "\\":
            c = t.get()
            if not c or c == "\n":
                return None
        sub += c
    return f"{name}.{sub}" if t.get() == "]" else None


_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "\\": "\\", '"': '"'}


def _value(t: _Text) -> str | None:
    """After '=': the value, with quotes, escapes and continuation lines (None: invalid)."""
    out = ""
    quote = comment = False
    space = 0
    while True:
        c = t.get()
        if not c or c == "\n":
            return None if quote else out
        if comment:
            continue
        if c.isspace() and not quote:
            space += 1 if out else 0
            continue
        if not quote and c in ";#":
            comment = True
            continue
        out += " " * space
        space = 0
        if c == "\\":
            c = t.get()
            if c == "\n":
                continue
            if c not in _ESCAPES:
                return None
            out += _ESCAPES[c]
        elif c == '"':
            quote = not quote
        else:
            out += c


def parse(text: str) -> Iterator[tuple[str, str | None]]:
    """(key, value) for each setting: key 'section[.subsection].name' with the section and the
    name lower-cased; None for a bare name (git's boolean true). A line git would refuse is
    skipped (git itself then refuses the whole file)."""
    t, section = _Text(text), None
    while c := t.get():
        if c.isspace():
            continue
        if c in "#;":
            t.skip_line()
        elif c == "[":
            section = _header(t)
            if section is None:
                t.skip_line()
        elif c.isalpha() and section is not None:
            name = c
            while (c := t.peek()) and (c.isalnum() or c == "-"):
                name += t.get()
            while t.peek() in (" ", "\t"):
                t.get()
            after = t.peek()
            key = f"{section}.{name.lower()}"
            if after == "=":
                t.get()
                value = _value(t)
                if value is not None:
                    yield key, value
            elif after in ("", "\n", "\r", "#", ";"):
                yield key, None
            else:
                t.skip_line()
        else:
            t.skip_line()


def _shown(value: str | None) -> str:
    """A value as a report may print it: one line, printable, not too long."""
    text = "".join(ch if ch.isprintable() else "?" for ch in (value or ""))
    return text if len(text) <= 80 else text[:77] + "..."


_read: dict[tuple[int, ...], list[str]] = {}  # a file's findings, by what only the kernel sets
_MAX_READ = 4096


def _config_dangers(path: Path) -> list[str]:
    """The settings in one configuration file that run a program. Read again whenever its
    inode, size or change time differs (a change time cannot be set back): every command
    looks at every repository's, most unchanged."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return []
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_ctime_ns, st.st_mtime_ns)
        if stamp in _read and time.time_ns() - st.st_ctime_ns > RACY_NS:
            return _read[stamp]
        text = f.read(MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    out = _findings(text)
    if len(_read) >= _MAX_READ:
        _read.clear()
    _read[stamp] = out
    return out


def _findings(text: str) -> list[str]:
    out = []
    for key, value in parse(text):
        if runs_program(key, value):
            said = f"{key} = {_shown(value)}" if value is not None else key
            out.append(said if known(key) else f"{said} (a setting not known to be inert)")
    return out


def _hooks(hooks: Path) -> list[str]:
    """Executable files in hooks/ (git runs one by its name; `*.sample` never)."""
    try:
        entries = list(os.scandir(hooks))
    except OSError:
        return []
    out = []
    for e in entries:
        if e.name.endswith(".sample"):
            continue
        try:
            st = e.stat()  # a link to an executable is run as one
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_mode & 0o111:
            out.append(e.name)
    return sorted(out)


def dangers(git_dir: Path, shown_as: str) -> frozenset[Danger]:
    """What in this git directory makes git run a program: (file, setting) pairs, the file
    named as `shown_as` + its place in the git directory."""
    found: set[Danger] = set()
    for name in CONFIG_FILES:
        for setting in _config_dangers(git_dir / name):
            found.add((f"{shown_as}/{name}", setting))
    for hook in _hooks(git_dir / "hooks"):
        found.add((f"{shown_as}/hooks/{hook}", "an executable hook"))
    return frozenset(found)
