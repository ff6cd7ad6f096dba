"""The read-only tools: read_file, list_dir, find_files, search_text."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mca.errors import PathRefused, ToolError
from mca.fsutil import ContainmentError, read_contained
from mca.tools.base import ToolContext, arg_int, arg_str
from mca.tools.paths import inside, relative_label, resolve_in, resolve_in_skill

MAX_READ_BYTES = 256 * 1024
MAX_READ_LINES = 2000
MAX_LIST_ENTRIES = 500
MAX_FIND_RESULTS = 500
MAX_SEARCH_MATCHES = 200
MAX_SEARCH_FILE_BYTES = 1024 * 1024
MAX_MATCH_LINE = 300
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mca", ".tox"}
)


def _resolve_readable(ctx: ToolContext, path: str) -> tuple[Path, str | None]:
    """Resolve a readable path: the workspace, or inside a loaded skill's directory."""
    try:
        return resolve_in(ctx.root, path), None
    except PathRefused as refused:
        candidate = Path(os.path.normpath(path)) if "\x00" not in path else Path()
        if not candidate.is_absolute():
            raise
        for name, skill_dir in ctx.skill_dirs.items():
            for base in (skill_dir, skill_dir.resolve()):
                if inside(candidate, base):
                    rel = str(candidate.relative_to(base))
                    return resolve_in_skill(skill_dir, rel), name
        raise refused


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head[:8192]


def read_file(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    """Read a text file with line numbers, capped in bytes and lines."""
    path = arg_str(args, "path")
    offset = arg_int(args, "offset", 1, 1, 10**9)
    limit = arg_int(args, "limit", MAX_READ_LINES, 1, MAX_READ_LINES)
    target, skill = _resolve_readable(ctx, path)
    if target.is_dir():
        raise ToolError(f"{path} is a directory; use list_dir")
    allowed = ctx.root.resolve() if skill is None else ctx.skill_dirs[skill].resolve()
    try:
        data = read_contained(target, allowed)
    except FileNotFoundError:
        raise ToolError(f"{path}: no such file") from None
    except ContainmentError as e:
        raise PathRefused(str(e)) from None
    except OSError as e:
        raise ToolError(f"{path}: cannot read ({e.strerror})") from None
    if skill is not None:
        ctx.emit(
            "skill.resource.loaded",
            {"skill": skill, "resource": str(target), "reason": "read_file", "bytes": len(data)},
        )
    else:
        ctx.touched.add(relative_label(target, ctx.root.resolve()))
    if _is_binary(data):
        return f"{path}: binary file, {len(data)} bytes; not shown"
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    total = len(lines)
    chosen = lines[offset - 1 : offset - 1 + limit]
    out: list[str] = []
    size = 0
    for n, line in enumerate(chosen, offset):
        size += len(line) + 8
        if size > MAX_READ_BYTES:
            break
        out.append(f"{n:6}\t{line}")
    last = offset + len(out) - 1
    header = f"{path}: {total} lines total"
    if out and (offset > 1 or last < total):
        header += f"; showing lines {offset}-{last}"
        if last < total:
            header += f" ({total - last} more lines: read again with offset={last + 1})"
    if not out:
        header += f"; offset {offset} is past the end" if total else "; the file is empty"
    return header + "\n" + "\n".join(out)


def _walk(top: Path, depth: int) -> Iterator[tuple[Path, int]]:
    """Entries below `top` up to `depth`, directories first, skipping noise directories."""
    try:
        entries = sorted(top.iterdir(), key=lambda p: (not p.is_dir(), p.name))
    except OSError:
        return
    for entry in entries:
        yield entry, 1
        if entry.is_dir() and not entry.is_symlink() and depth > 1 and entry.name not in SKIP_DIRS:
            for sub, d in _walk(entry, depth - 1):
                yield sub, d + 1


def list_dir(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    """List a directory as an indented tree."""
    path = arg_str(args, "path", required=False, default=".") or "."
    depth = arg_int(args, "depth", 1, 1, 5)
    target = resolve_in(ctx.root, path)
    if not target.is_dir():
        raise ToolError(f"{path}: not a directory" if target.exists() else f"{path}: not found")
    lines: list[str] = []
    for entry, d in _walk(target, depth):
        if len(lines) >= MAX_LIST_ENTRIES:
            lines.append(f"... listing cut at {MAX_LIST_ENTRIES} entries")
            break
        suffix = "/" if entry.is_dir() else ""
        lines.append("  " * (d - 1) + entry.name + suffix)
    return "\n".join(lines) if lines else f"{path}: empty directory"


def _files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield Path(dirpath, name)


@functools.lru_cache(maxsize=65536)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob with ** into a regex over /-separated relative paths."""
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


@functools.lru_cache(maxsize=65536)
def _literal_prefix(pattern: str) -> str:
    """The part of a glob before its first wildcard (a cheap pre-check)."""
    cut = min((i for i, c in enumerate(pattern) if c in "*?["), default=len(pattern))
    return pattern[:cut]


def glob_match(pattern: str, rel: str) -> bool:
    """Match a relative path against a glob; a pattern without / also matches the base name."""
    if "/" not in pattern:
        if fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern):
            return True
    elif not rel.startswith(_literal_prefix(pattern)):
        return False
    return _glob_regex(pattern).match(rel) is not None


def find_files(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    """Find files by glob pattern relative to the workspace."""
    pattern = arg_str(args, "pattern")
    if ".." in pattern.split("/") or pattern.startswith("/"):
        raise PathRefused(f"{pattern}: patterns must stay inside the workspace")
    pattern = pattern.removeprefix("./") or "*"
    root = ctx.root.resolve()
    hits: list[str] = []
    for f in _files(root):
        rel = f.relative_to(root).as_posix()
        if glob_match(pattern, rel):
            hits.append(rel)
            if len(hits) > MAX_FIND_RESULTS:
                break
    if not hits:
        return f"no files match {pattern}"
    more = len(hits) > MAX_FIND_RESULTS
    shown = "\n".join(hits[:MAX_FIND_RESULTS])
    return shown + (
        f"\n... more than {MAX_FIND_RESULTS} matches; narrow the pattern" if more else ""
    )


def search_text(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    """Search file contents with a regex; path:line:text, capped."""
    pattern = arg_str(args, "pattern")
    path_glob = arg_str(args, "path", required=False, default="")
    try:
        regex = re.compile(pattern)
    except re.error as e:
        raise ToolError(f"invalid regex {pattern!r}: {e}") from None
    root = ctx.root.resolve()
    out: list[str] = []
    for f in _files(root):
        rel = f.relative_to(root).as_posix()
        if path_glob and not glob_match(path_glob, rel):
            continue
        try:
            if f.stat().st_size > MAX_SEARCH_FILE_BYTES or not inside(f.resolve(), root):
                continue
            data = f.read_bytes()
        except OSError:
            continue
        if _is_binary(data):
            continue
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                out.append(f"{rel}:{n}:{line[:MAX_MATCH_LINE]}")
                if len(out) >= MAX_SEARCH_MATCHES:
                    out.append(f"... stopped at {MAX_SEARCH_MATCHES} matches; narrow the search")
                    return "\n".join(out)
    return "\n".join(out) if out else f"no matches for {pattern}"
