"""The session log: JSON lines under $MCA_HOME/logs/, with secrets scrubbed."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mca.events import Event
from mca.fs.careful import open_private, private_dir
from mca.text.sanitize import scrub

__all__ = ["KEEP_LOGS", "SessionLog", "prune_logs"]

KEEP_LOGS = 100


class SessionLog:
    """Append-only JSON-lines event log for one session. A None path logs nowhere.

    When the log cannot be written (the disk is full, the directory went away), logging stops
    for the rest of the session and `on_fail` hears why, once; the session goes on.
    """

    def __init__(
        self,
        path: Path | None,
        secrets: Iterable[str] = (),
        on_fail: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.path = path
        self.secrets = tuple(secrets)
        self.on_fail = on_fail
        self.events: list[dict[str, Any]] = []  # kept in memory for /why and tests
        self._fd: int | None = None
        if path is not None:
            try:
                private_dir(path.parent)
            except OSError as e:
                self._fail(e)

    def _fail(self, e: OSError) -> None:
        where, self.path = self.path, None
        self.close()
        self.on_fail(
            f"the session log {where} cannot be written ({e.strerror or e}); logging is off"
        )

    def event(self, event: Event) -> None:
        """Record one event: {"ts": ..., "event": its kind, **its fields}."""
        if not event.logged:
            return
        record = {"ts": round(time.time(), 3), "event": event.kind, **event.to_json()}
        self.events.append(record)
        if self.path is None:
            return
        line = scrub(json.dumps(record, ensure_ascii=False, default=str), self.secrets)
        try:
            if self._fd is None:
                self._fd = open_private(self.path)
            os.write(self._fd, (line + "\n").encode("utf-8", "backslashreplace"))
        except OSError as e:
            self._fail(e)

    def close(self) -> None:
        """Close the log file (events after this reopen it)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)


def prune_logs(directory: Path, keep: int = KEEP_LOGS) -> int:
    """Delete all but the newest `keep` session logs; returns how many went."""
    try:
        logs = sorted(directory.glob("*.jsonl"))
    except OSError:
        return 0
    old = logs[:-keep] if len(logs) > keep else []
    for path in old:
        path.unlink(missing_ok=True)
    return len(old)
