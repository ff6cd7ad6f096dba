"""Where /export writes, by the rules every write of mca follows.

With no name, into mca's own `$MCA_HOME/exports/` (0700, files 0600): nothing lands in the
repository unasked. A name inside the workspace (relative, or absolute but under it) goes
through the tools' write path: contained (no symlink of the repository's leads it out),
protected paths ask, snapshotted so /undo reverts it. A path outside the workspace is one the
person typed: written there (atomically, never through a final symlink), protected paths
($MCA_HOME) still asking. Read-only mode writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from mca.errors import McaError, ToolError
from mca.fs.careful import atomic_write, private_dir, resolved
from mca.tools.base import ToolEnv, TurnState
from mca.tools.edit import write_for_person
from mca.workspace.paths import inside
from mca.workspace.protect import protected_reason

EXPORTS_DIR = "exports"


def _in_workspace(workspace: Path, path: Path) -> str | None:
    """The workspace-relative name of an absolute path written under the workspace, else None."""
    norm = Path(os.path.normpath(path))
    for base in (workspace.absolute(), resolved(workspace)):
        if inside(norm, base):
            return str(norm.relative_to(base))
    return None


def write_export(env: ToolEnv, turns: int, name: str, default: str, data: bytes) -> str:
    """Write an export where `name` says ('' : $MCA_HOME/exports/`default`); returns where it
    went, for the person. Raises McaError when it was not written."""
    if env.approvals.mode == "read-only":
        raise McaError("not exported: mca is in read-only mode (/mode auto-edit to write)")
    if not name:
        return _to_home(env, default, data)
    path = _expand(name, env.user_home)
    rel = name if not path.is_absolute() else _in_workspace(env.root, path)
    try:
        if rel is not None:
            written = write_for_person(env, TurnState(turns), rel, data)
            return f"{resolved(env.root) / written} (/undo reverts it)"
        return _outside(env, path, data)
    except (ToolError, OSError) as e:
        raise McaError(f"not exported: {getattr(e, 'strerror', None) or e}") from None


def _expand(name: str, user_home: Path | None) -> Path:
    """~ as the session's HOME (the same one skills and config use)."""
    return user_home / name[2:] if name.startswith("~/") and user_home else Path(name)


def _to_home(env: ToolEnv, default: str, data: bytes) -> str:
    if env.home is None:
        raise McaError("not exported: mca has no home directory to export into; name a file")
    folder = private_dir(env.home / EXPORTS_DIR)
    try:
        atomic_write(folder / default, data, 0o600, root=resolved(folder))
    except OSError as e:
        raise McaError(f"not exported to {folder}: {e.strerror or e}") from None
    return str(folder / default)


def _outside(env: ToolEnv, path: Path, data: bytes) -> str:
    """A path outside the workspace the person typed: protected ones ask (never a fold)."""
    from mca.text.diff import file_diff

    target = Path(os.path.abspath(path))
    reason = protected_reason(str(target), resolved(target), env.home)
    diff = file_diff(str(target), None, data, None)
    if reason is not None and not env.approvals.ask.approve_write(str(target), reason, diff):
        raise McaError(f"not exported: {target} is a protected path ({reason})")
    atomic_write(target, data, 0o600, root=resolved(target.parent))
    return f"{resolved(target)} (outside the workspace: /undo does not cover it)"
