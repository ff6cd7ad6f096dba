"""The writing tools: write_file and edit_file. Both snapshot the target before touching it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mca.errors import PathRefused, ToolError
from mca.fsutil import ContainmentError, atomic_write, read_contained
from mca.tools.base import ToolContext, arg_str
from mca.tools.paths import relative_label, resolve_in

MAX_WRITE_BYTES = 10 * 1024 * 1024
PROTECTED = (".mca/snapshots",)


def _target(ctx: ToolContext, path: str) -> tuple[Path, str]:
    target = resolve_in(ctx.root, path)
    rel = relative_label(target, ctx.root.resolve())
    if any(rel == p or rel.startswith(p + "/") for p in PROTECTED):
        raise PathRefused(f"{path}: refused, mca's snapshot store is not writable by tools")
    if target.is_dir():
        raise ToolError(f"{path} is a directory")
    return target, rel


def _commit(ctx: ToolContext, target: Path, rel: str, data: bytes) -> None:
    """Snapshot, then replace the file atomically, keeping its mode."""
    if len(data) > MAX_WRITE_BYTES:
        raise ToolError(f"{rel}: content is {len(data)} bytes, over the {MAX_WRITE_BYTES} limit")
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    try:
        ctx.snapshots.before_write(ctx.turn, rel, target, data, note=f"turn {ctx.turn}")
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data, mode, root=ctx.root.resolve())
    except ContainmentError as e:
        raise PathRefused(str(e)) from None
    except OSError as e:  # the directory vanished, the disk is full, ...: the old file stays
        raise ToolError(f"{rel}: not written ({e.strerror or e}); the file is unchanged") from None
    ctx.touched.add(rel)
    ctx.emit("file.changed", {"path": rel, "bytes": len(data)})


def write_file(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    """Create or replace a file with the given content."""
    path = arg_str(args, "path")
    content = arg_str(args, "content")
    target, rel = _target(ctx, path)
    existed = target.exists()
    data = content.encode("utf-8")
    _commit(ctx, target, rel, data)
    verb = "replaced" if existed else "created"
    return f"{verb} {rel} ({len(data)} bytes, {content.count(chr(10)) + 1} lines)"


def edit_file(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    """Replace old_text with new_text; old_text must match exactly once unless replace_all."""
    path = arg_str(args, "path")
    old = arg_str(args, "old_text")
    new = arg_str(args, "new_text")
    replace_all = args.get("replace_all", False)
    if not isinstance(replace_all, bool):
        raise ToolError("argument 'replace_all' must be true or false")
    if not old:
        raise ToolError("old_text is empty; use write_file to create or replace a whole file")
    target, rel = _target(ctx, path)
    try:
        text = read_contained(target, ctx.root.resolve()).decode("utf-8")
    except FileNotFoundError:
        raise ToolError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ToolError(f"{path}: not a UTF-8 text file") from None
    except ContainmentError as e:
        raise PathRefused(str(e)) from None
    except OSError as e:
        raise ToolError(f"{path}: cannot read ({e.strerror})") from None
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old_text not found in {rel} (it matched 0 times; read the file first)")
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_text matched {count} times in {rel}; add surrounding lines so it matches"
            " once, or set replace_all"
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    _commit(ctx, target, rel, updated.encode("utf-8"))
    return f"edited {rel}: replaced {count if replace_all else 1} occurrence(s)"
