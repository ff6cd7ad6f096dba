"""The writing tools: write_file and edit_file. Both snapshot the target before touching it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mca.errors import PathRefused, ToolError
from mca.events import FileChanged
from mca.fs.careful import (
    ContainmentError,
    FileTooLarge,
    NotRegularFile,
    atomic_write,
    is_dir,
    read_regular,
)
from mca.text.counts import plural
from mca.text.diff import MAX_DIFF_LINES, FileDiff, file_diff, fold
from mca.tools import eol
from mca.tools.allow import Answer
from mca.tools.base import READ_ONLY, ToolEnv, TurnState, arg_str
from mca.workspace.paths import relative_label, resolve_in
from mca.workspace.protect import protected_reason

__all__ = [
    "MAX_EDIT_BYTES",
    "MAX_WRITE_BYTES",
    "count_lines",
    "edit_file",
    "read_for_person",
    "write_file",
    "write_for_person",
]

MAX_WRITE_BYTES = 10 * 1024 * 1024
MAX_EDIT_BYTES = MAX_WRITE_BYTES


def _target(env: ToolEnv, path: str) -> tuple[Path, str]:
    target = resolve_in(env.root, path)
    rel = relative_label(target, env.root.resolve())
    if is_dir(target):
        raise ToolError(f"{path} is a directory")
    return target, rel


def _old_bytes(env: ToolEnv, target: Path, path: str) -> bytes | None:
    """The file's current bytes (None when it does not exist), read safely and capped."""
    try:
        return read_regular(target, env.root.resolve(), cap=MAX_EDIT_BYTES)
    except FileNotFoundError:
        return None
    except ContainmentError as e:
        raise PathRefused(str(e)) from None
    except NotRegularFile as e:
        raise ToolError(f"{path}: {e.strerror}; mca only edits regular files") from None
    except FileTooLarge:
        raise ToolError(
            f"{path}: larger than {MAX_EDIT_BYTES:,} bytes; too large to edit or replace here"
            " (use run_command with a stream editor)"
        ) from None
    except OSError as e:
        raise ToolError(f"{path}: cannot read ({e.strerror})") from None


def _confirm_protected(env: ToolEnv, reason: str, rel: str, diff: FileDiff) -> None:
    if not env.approvals.ask.approve_write(rel, reason, diff):
        raise ToolError(
            f"{rel}: not written: it is a protected path ({reason}) and the user did not approve"
            " this write"
        )


def _commit(
    env: ToolEnv,
    turn: TurnState,
    target: Path,
    rel: str,
    old: bytes | None,
    data: bytes,
    own: str | None = None,
    shown_first: bool = False,
) -> None:
    """Ask for protected paths (or every edit in "ask" mode), snapshot, then replace the file
    atomically, keeping its mode; the diff goes out with the change. `own`: the person asked
    for this write themselves (no "ask"-mode question); its snapshot step (free_step).
    `shown_first`: its diff already went out with a question of the caller's (`#`)."""
    mode = env.approvals.mode
    if mode == "read-only":
        raise ToolError(f"{rel}: not written: {READ_ONLY}; describe the change instead")
    if len(data) > MAX_WRITE_BYTES:
        raise ToolError(f"{rel}: content is {len(data)} bytes, over the {MAX_WRITE_BYTES} limit")
    reason = protected_reason(rel, target, env.home, env.root, env.skill_roots)
    ask_mode = mode == "ask" and own is None and not env.approvals.always.edits
    asked = reason is not None or ask_mode  # the diff goes with it
    whole = file_diff(rel, old, data, limit=None) if asked else None  # asked about: whole
    if reason is not None and whole is not None:
        _confirm_protected(env, reason, rel, whole)
    elif whole is not None:
        answer = env.approvals.ask.approve_edit(rel, whole)
        if answer == Answer.ALWAYS:  # this one and every later edit of the session
            env.approvals.always.edits = True
        elif not answer or answer in (Answer.NO, Answer.UNASKED):
            raise ToolError(f"{rel}: not written: the user declined this edit")
    try:
        bits = target.stat().st_mode & 0o777 if old is not None else None
        note = f"turn {turn.number}" if own is None else f"after turn {turn.number}"
        if own is None:  # the person's own write (/export) is no turn's change
            env.before_change(turn.number)
        env.workspace.before_write(turn.number, rel, target, data, note, own or "")
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data, bits, root=env.root.resolve())
    except ContainmentError as e:
        raise PathRefused(str(e)) from None
    except (NotRegularFile, FileTooLarge) as e:
        raise ToolError(f"{rel}: not written ({e.strerror}); the file is unchanged") from None
    except OSError as e:  # the directory vanished, the disk is full, ...: the old file stays
        raise ToolError(f"{rel}: not written ({e.strerror or e}); the file is unchanged") from None
    turn.touched.add(rel)
    shown = fold(whole, MAX_DIFF_LINES) if whole is not None else file_diff(rel, old, data)
    env.emit(FileChanged(rel, len(data), shown, asked or shown_first))


def count_lines(text: str) -> int:
    """Lines as an editor counts them: a final newline does not start another line."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def write_file(env: ToolEnv, turn: TurnState, args: Mapping[str, Any]) -> str:
    """Create or replace a file with the given content."""
    path = arg_str(args, "path")
    content = arg_str(args, "content")
    target, rel = _target(env, path)
    old = _old_bytes(env, target, path)
    data = content.encode("utf-8")
    _commit(env, turn, target, rel, old, data)
    verb = "replaced" if old is not None else "created"
    return f"{verb} {rel} ({plural(len(data), 'byte')}, {plural(count_lines(content), 'line')})"


def edit_file(env: ToolEnv, turn: TurnState, args: Mapping[str, Any]) -> str:
    """Replace old_text with new_text; old_text must match exactly once unless replace_all."""
    path = arg_str(args, "path")
    old = arg_str(args, "old_text")
    new = arg_str(args, "new_text")
    replace_all = args.get("replace_all", False)
    if not isinstance(replace_all, bool):
        raise ToolError("argument 'replace_all' must be true or false")
    if not old:
        raise ToolError("old_text is empty; use write_file to create or replace a whole file")
    target, rel = _target(env, path)
    before = _old_bytes(env, target, path)
    if before is None:
        raise ToolError(f"{path}: no such file")
    try:
        text = before.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path}: not a UTF-8 text file") from None
    updated, count = eol.replace(text, old, new, replace_all)
    if count == 0:
        raise ToolError(f"old_text not found in {rel} (it matched 0 times; read the file first)")
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_text matched {count} times in {rel}; add surrounding lines so it matches"
            " once, or set replace_all"
        )
    _commit(env, turn, target, rel, before, updated.encode("utf-8"))
    return f"edited {rel}: replaced {plural(count if replace_all else 1, 'occurrence')}"


def read_for_person(env: ToolEnv, path: str) -> bytes | None:
    """What a file the person is about to change holds (None: none), read as the tools read it
    (contained, a regular file, capped)."""
    target, _ = _target(env, path)
    return _old_bytes(env, target, path)


def write_for_person(
    env: ToolEnv, turn: TurnState, path: str, data: bytes, *, shown_first: bool = False
) -> str:
    """A write the person asked for (/export): the tools' own path (contained in the workspace,
    protected paths ask, read-only mode refuses, snapshotted apart so /undo reverts it alone),
    without the "ask" mode's question. Returns the path written, relative to the workspace."""
    target, rel = _target(env, path)
    old = _old_bytes(env, target, path)
    own = env.workspace.free_step(turn.number)
    _commit(env, turn, target, rel, old, data, own=own, shown_first=shown_first)
    return rel
