"""The REPL's history in $MCA_HOME/history: what was typed, with every known key scrubbed.

A key pasted at the prompt is a key on disk otherwise; the file is mca's own state and is read
back as untrusted data: only a regular file (never through a symlink, never a FIFO that would
hang the start), at most its last MAX_HISTORY_BYTES. The format is prompt_toolkit's
FileHistory's ("# date" then "+line" per line of an entry), so older files keep working.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.history import History, InMemoryHistory

from mca.fs.careful import open_private, private_dir, read_tail
from mca.text.sanitize import scrub

MAX_HISTORY_BYTES = 4 * 1024 * 1024


class PrivateHistory(History):
    """prompt_toolkit's History over a private file, scrubbed going in and coming out."""

    def __init__(self, path: Path, secrets: Iterable[str] = ()) -> None:
        self.path = path
        self.secrets = tuple(secrets)
        super().__init__()

    def load_history_strings(self) -> Iterable[str]:
        try:
            data = read_tail(self.path, limit=MAX_HISTORY_BYTES)
        except OSError:
            return []
        strings: list[str] = []
        lines: list[str] = []
        for line in data.decode("utf-8", "replace").splitlines(keepends=True):
            if line.startswith("+"):
                lines.append(line[1:])
            elif lines:
                strings.append("".join(lines).removesuffix("\n"))
                lines = []
        if lines:
            strings.append("".join(lines).removesuffix("\n"))
        return [scrub(s, self.secrets) for s in reversed(strings)]  # newest first

    def store_string(self, string: str) -> None:
        lines = scrub(string, self.secrets).split("\n")
        entry = f"\n# {datetime.datetime.now()}\n" + "".join(f"+{line}\n" for line in lines)
        # the history is a convenience: a file that cannot be written is left as it is
        with contextlib.suppress(OSError):
            fd = open_private(self.path)
            try:
                os.write(fd, entry.encode("utf-8", "replace"))
            finally:
                os.close(fd)


def load_history(home: Path, secrets: Iterable[str] = ()) -> History:
    """The REPL's history in $MCA_HOME/history (0600), or in memory when that cannot be."""
    try:
        private_dir(home)
        os.close(open_private(home / "history"))
    except OSError:
        return InMemoryHistory()
    return PrivateHistory(home / "history", secrets)
