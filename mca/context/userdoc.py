"""The person's own instructions: $MCA_HOME/AGENTS.md, read in every workspace before the
project's (as Codex reads ~/.codex/AGENTS.md), written by `#~ text` at the prompt. It lives in
mca's home, where no repository writes; a file there that is not a regular file is not read."""

from __future__ import annotations

from pathlib import Path

from mca.context.prompt import AGENTS_FILE, MAX_AGENTS_CHARS
from mca.context.provenance import defang
from mca.errors import McaError
from mca.fs.careful import atomic_write, private_dir, read_regular

__all__ = ["read_user_doc", "user_doc", "write_user_doc"]

LABEL = "$MCA_HOME/AGENTS.md"


def user_doc(home: Path) -> tuple[Path, bytes | None]:
    """(its path, its bytes; None when there is none or it cannot be read as a regular file)."""
    path = home / AGENTS_FILE
    try:
        return path, read_regular(path, home, cap=MAX_AGENTS_CHARS * 4)
    except OSError:
        return path, None


def read_user_doc(home: Path) -> str:
    """Its text as the system prompt carries it ('' when there is none)."""
    _, data = user_doc(home)
    text = (data or b"").decode("utf-8", errors="replace").strip()[:MAX_AGENTS_CHARS]
    if not text:
        return ""
    return (
        "Your user's own instructions (every workspace):\n"
        f'<agents_md path="{LABEL}">\n{defang(text)}\n</agents_md>'
    )


def write_user_doc(home: Path, data: bytes) -> str:
    """Write it whole (a temporary file renamed over it), private to the person."""
    try:
        private_dir(home)
        atomic_write(home / AGENTS_FILE, data, 0o600, root=home)
    except OSError as e:
        raise McaError(f"{home / AGENTS_FILE} not written: {e.strerror or e}") from None
    return str(home / AGENTS_FILE)
