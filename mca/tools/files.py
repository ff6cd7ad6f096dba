"""The read-only tools: read_file, list_dir, find_files, search_text."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mca.errors import PathRefused, ToolError
from mca.events import SkillResourceLoaded
from mca.fs.careful import ContainmentError, NotRegularFile, is_dir, open_regular, read_head
from mca.fs.globs import glob_match
from mca.text.counts import plural
from mca.tools.base import ToolEnv, TurnState, arg_int, arg_str
from mca.tools.line_window import Line, Window, read_window
from mca.workspace.ignore import Ignore
from mca.workspace.paths import inside, relative_label, resolve_in, resolve_in_skill

__all__ = [
    "MAX_FIND_RESULTS",
    "MAX_LIST_ENTRIES",
    "MAX_MATCH_LINE",
    "MAX_READ_BYTES",
    "MAX_READ_LINES",
    "MAX_SEARCH_FILE_BYTES",
    "MAX_SEARCH_MATCHES",
    "MAX_WALK_FILES",
    "SKIP_DIRS",
    "VCS_DIRS",
    "find_files",
    "list_dir",
    "read_file",
    "search_text",
    "workspace_files",
]

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


def _resolve_readable(env: ToolEnv, path: str) -> tuple[Path, str | None]:
    """Resolve a readable path: the workspace, or inside a loaded skill's real directory (given
    as the model was told it: absolute, ~/..., or relative to the workspace with ../). `~/` is
    the user's home, as the model was told; never a folder of the workspace named `~`."""
    if path.startswith("~/") and env.user_home is not None:
        found = _in_skill(env, Path(os.path.normpath(env.user_home / path[2:])))
        if found is None:
            raise PathRefused(f"{path}: refused: under ~/ only a loaded skill's own files are read")
        return found
    try:
        return resolve_in(env.root, path), None
    except PathRefused:
        if "\x00" in path:
            raise
        found = _in_skill(env, Path(os.path.normpath(env.root / path)))  # absolute stays so
        if found is None:
            raise
        return found


def _in_skill(env: ToolEnv, candidate: Path) -> tuple[Path, str] | None:
    """(the resolved file, the skill's name) when `candidate` is inside a loaded skill's
    directory (as found, or its real path); the file must resolve inside the real one."""
    for name, skill_dir in env.skills.dirs().items():
        for base in (skill_dir, skill_dir.resolve()):
            if inside(candidate, base):
                return resolve_in_skill(skill_dir, str(candidate.relative_to(base))), name
    return None


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head[:8192]


def _show(line: Line) -> str:
    if not line.cut:
        return line.text
    end = line.column - 1 + len(line.text)
    more = f"; read on with column={end + 1}" if end < line.chars else ""
    return (
        line.text + f" … [line {line.number} has {line.chars:,} characters; shown:"
        f" {line.column:,}-{end:,}{more}]"
    )


def _open_error(path: str, e: OSError) -> ToolError:
    if isinstance(e, FileNotFoundError):
        return ToolError(f"{path}: no such file")
    if isinstance(e, ContainmentError):
        return PathRefused(str(e))
    if isinstance(e, NotRegularFile):
        return ToolError(f"{path}: {e.strerror}; mca only reads regular files")
    return ToolError(f"{path}: cannot read ({e.strerror or e})")


def _activate(env: ToolEnv, turn: TurnState, name: str) -> str:
    """Reading a skill is activating it: the gates, dedup and protection of a matched body."""
    history = [*turn.history, *turn.pending]
    loaded, note, message = env.skills.activate(name, turn.number, history)
    if not loaded or message is None:
        raise ToolError(note)
    turn.pending.append(message)
    return note


def read_file(env: ToolEnv, turn: TurnState, args: Mapping[str, Any]) -> str:
    """Read a text file with line numbers, capped in bytes and lines (bounded memory)."""
    path = arg_str(args, "path")
    offset = arg_int(args, "offset", 1, 1, 10**9)
    limit = arg_int(args, "limit", MAX_READ_LINES, 1, MAX_READ_LINES)
    column = arg_int(args, "column", 1, 1, 10**10)
    if path.startswith("skill:") and (offset > 1 or column > 1):
        return _skill_rest(env, turn, path, (offset, limit, column))
    if path.startswith("skill:"):
        return _activate(env, turn, path.removeprefix("skill:").strip())
    target, skill = _resolve_readable(env, path)
    if is_dir(target):
        raise ToolError(f"{path} is a directory; use list_dir")
    allowed = env.root.resolve() if skill is None else env.skills.dirs()[skill].resolve()
    try:
        with open_regular(target, allowed) as (f, st):
            name = env.skills.skill_named(target, st)  # a skill's body passes its gates
            if name is None:
                head = f.read(8192)
                binary = _is_binary(head)
                if not binary:
                    f.seek(0)
                    win = read_window(f, st.st_size, offset, limit, MAX_READ_BYTES, column=column)
    except OSError as e:
        raise _open_error(path, e) from None
    if name is not None:
        return _activate(env, turn, name)
    if skill is None:
        turn.touched.add(relative_label(target, env.root.resolve()))
    _resource_event(env, turn, target, st.st_size, skill)
    if binary:
        return f"{path}: binary file, {plural(st.st_size, 'byte')}; not shown"
    return _listing(path, win, offset, st.st_size)


def _resource_event(
    env: ToolEnv, turn: TurnState, target: Path, size: int, skill: str | None
) -> None:
    """A file of a loaded skill was read: name it relative to its skill, with why. A project
    skill's files resolve inside the workspace: its skill is the nearest folder above whose
    SKILL.md is a loaded skill's (a few lookups, never one per installed skill)."""
    base = env.skills.dirs()[skill].resolve() if skill is not None else None
    if skill is None:
        for parent in target.parents:
            if not inside(parent, env.root.resolve()):
                return
            if (skill := env.skills.skill_in(parent)) is not None:
                base = parent
                break
    if skill is None or base is None:
        return
    rel = target.relative_to(base).as_posix() if inside(target, base) else target.name
    reason = f"the model read it with read_file (turn {turn.number})"
    env.emit(SkillResourceLoaded(skill, rel, reason, size))


def _skill_rest(env: ToolEnv, turn: TurnState, path: str, where: tuple[int, int, int]) -> str:
    """read_file skill:NAME offset=N: the body of a skill in context, from line N, as a file
    would be read (the way on past the head of a skill that did not fit the budget)."""
    offset, limit, column = where
    name = path.removeprefix("skill:").strip()
    body = env.skills.body_in_context(name, [*turn.history, *turn.pending])
    data = body.encode("utf-8", "surrogatepass")
    win = read_window(io.BytesIO(data), len(data), offset, limit, MAX_READ_BYTES, column=column)
    return _listing(path, win, offset, len(data))


def _listing(path: str, win: Window, offset: int, size: int) -> str:
    """Numbered lines of a window, under a header saying which lines and how to read on."""
    out = [f"{line.number:6}\t{_show(line)}" for line in win.lines]
    total = f"{plural(win.total, 'line')} total" if win.total is not None else f"{size:,} bytes"
    header = f"{path}: {total}"
    last = offset + len(out) - 1
    more = win.total is None or last < win.total
    if out and (offset > 1 or more):
        header += f"; showing lines {offset}-{last}"
        if more:
            rest = f"{plural(win.total - last, 'more line')}: " if win.total is not None else ""
            header += f" ({rest}read again with offset={last + 1})"
    if not out:
        header += f"; offset {offset} is past the end" if win.total else "; the file is empty"
    if win.crlf:
        header += "; CRLF line endings (shown without the \\r)"
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


def list_dir(env: ToolEnv, turn: TurnState, args: Mapping[str, Any]) -> str:
    """List a directory as an indented tree."""
    path = arg_str(args, "path", required=False, default=".") or "."
    depth = arg_int(args, "depth", 1, 1, 5)
    target = resolve_in(env.root, path)
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


VCS_DIRS = frozenset({".git", ".hg", ".svn"})
MAX_WALK_FILES = 200_000


def workspace_files(root: Path, include_ignored: bool = False) -> Iterator[Path]:
    """Files below root, sorted, without VCS directories; .gitignore'd ones and noise
    directories (node_modules, .venv, ...) only when include_ignored."""
    ignore = None if include_ignored else Ignore(root)
    skip = VCS_DIRS if include_ignored else SKIP_DIRS
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        if ignore is not None:
            ignore.enter(rel_dir)
        prefix = rel_dir + "/" if rel_dir else ""
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in skip and (ignore is None or not ignore.ignored(prefix + d, True))
        )
        for name in sorted(filenames):
            if ignore is not None and ignore.ignored(prefix + name, False):
                continue
            seen += 1
            if seen > MAX_WALK_FILES:
                return
            yield Path(dirpath, name)


def _include_ignored(args: Mapping[str, Any]) -> bool:
    value = args.get("include_ignored", False)
    if not isinstance(value, bool):
        raise ToolError("argument 'include_ignored' must be true or false")
    return value


def find_files(env: ToolEnv, turn: TurnState, args: Mapping[str, Any]) -> str:
    """Find files by glob pattern relative to the workspace (.gitignore honoured)."""
    pattern = arg_str(args, "pattern")
    include = _include_ignored(args)
    if ".." in pattern.split("/") or pattern.startswith("/"):
        raise PathRefused(f"{pattern}: patterns must stay inside the workspace")
    pattern = pattern.removeprefix("./") or "*"
    root = env.root.resolve()
    hits: list[str] = []
    for f in workspace_files(root, include):
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


def search_text(env: ToolEnv, turn: TurnState, args: Mapping[str, Any]) -> str:
    """Search file contents with a regex; path:line:text, capped."""
    pattern = arg_str(args, "pattern")
    path_glob = arg_str(args, "path", required=False, default="")
    include = _include_ignored(args)
    try:
        regex = re.compile(pattern)
    except re.error as e:
        raise ToolError(f"invalid regex {pattern!r}: {e}") from None
    root = env.root.resolve()
    out: list[str] = []
    skills: set[str] = set()
    for f in workspace_files(root, include):
        rel = f.relative_to(root).as_posix()
        if path_glob and not glob_match(path_glob, rel):
            continue
        try:
            st = os.lstat(f)
            if (name := env.skills.skill_named(f, st)) is not None:
                skills.add(name)  # a loaded skill's body reaches the model through its gates
                continue
            data, size = read_head(f, root, limit=MAX_SEARCH_FILE_BYTES + 1)
        except OSError:  # a FIFO, a device, a symlink, gone, unreadable: not searched
            continue
        if size > MAX_SEARCH_FILE_BYTES:
            continue
        if _is_binary(data):
            continue
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                out.append(f"{rel}:{n}:{line[:MAX_MATCH_LINE]}")
                if len(out) >= MAX_SEARCH_MATCHES:
                    out.append(f"... stopped at {MAX_SEARCH_MATCHES} matches; narrow the search")
                    return "\n".join(out)
    note = f"(the SKILL.md of {', '.join(sorted(skills))} not searched: read_file skill:NAME)"
    return "\n".join([*(out or [f"no matches for {pattern}"]), *([note] if skills else [])])
