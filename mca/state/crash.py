"""The last guard: an exception nobody foresaw is a bug. The person gets one line; the
traceback (secrets scrubbed) goes to a private file under $MCA_HOME/logs for the bug report."""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Iterable, Mapping
from pathlib import Path

from mca.fs.careful import open_private, private_dir
from mca.text.sanitize import excerpt, scrub, visible

__all__ = ["home_of", "report_bug"]


def home_of(env: Mapping[str, str]) -> Path:
    """$MCA_HOME as the environment says, without validating anything (a bug is being told)."""
    return Path(env.get("MCA_HOME") or Path(env.get("HOME") or "~").expanduser() / ".mca")


def report_bug(error: BaseException, home: Path, secrets: Iterable[str]) -> str:
    """Write the traceback where it can be found; return the line to show."""
    what = excerpt(visible(scrub(f"{type(error).__name__}: {error}", secrets)))
    text = scrub("".join(traceback.format_exception(error)), secrets)
    path = home / "logs" / f"crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.txt"
    try:
        private_dir(path.parent)
        fd = open_private(path)
        try:
            os.write(fd, text.encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)
        where = f"details in {path}"
    except OSError:
        where = "run with MCA_DEBUG=1 to see the traceback"
    return f"internal error (this is a bug in mca, please report it): {what}; {where}"
