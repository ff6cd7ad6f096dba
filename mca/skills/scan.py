"""Finding skills: roots with declared ranks, a bounded walk, and collision resolution."""

from __future__ import annotations

import contextlib
import gc
import os
import stat
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mca.context.project import project_dirs
from mca.fs.careful import exists, resolved
from mca.skills.cache import ParseCache
from mca.skills.model import SKILL_FILE, Candidate, Diagnostic, Root
from mca.skills.parse import read_skill_file, split_frontmatter
from mca.skills.policy import PRODUCTION, Policy

__all__ = [
    "DEPTH_LIMIT",
    "DIR_CAP",
    "MAX_PARENT_LEVELS",
    "PARENT_STEP",
    "ROOT_RANKS",
    "SKIP_DIRS",
    "ScanResult",
    "Stamp",
    "discover_roots",
    "find_skill_files",
    "gc_paused",
    "load_candidate",
    "resolve_collisions",
    "scan_roots",
    "stamp",
]

# Where skills are searched, and who wins a name collision (higher rank wins). Project roots
# lose PARENT_STEP per directory level above the workspace (nearest first).
ROOT_RANKS: Mapping[str, tuple[str, int]] = {
    "--skills-dir / MCA_SKILLS_DIRS": ("explicit", 400),
    "<dir>/.mca/skills": ("project", 300),
    "<dir>/.agents/skills": ("project", 299),
    "$MCA_HOME/skills": ("user", 200),
    "~/.agents/skills": ("user", 199),
}
PARENT_STEP = 2
MAX_PARENT_LEVELS = 40
DEPTH_LIMIT = 5
DIR_CAP = 2000
SKIP_DIRS = frozenset(
    {".git", "node_modules", "__pycache__", ".venv", "venv", "dist", "build", "target"}
)


def load_candidate(
    path: Path, root: Root | None, policy: Policy = PRODUCTION, cache: ParseCache | None = None
) -> Candidate:
    """Read, parse and validate one SKILL.md (the parse from the cache when the file is as it
    was; validation always runs, since it depends on the root)."""
    parsed = None
    if cache is not None and policy.split is split_frontmatter:
        parsed = cache.get(path)
        if parsed is None:
            parsed = read_skill_file(path, policy.split)
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode):
                    cache.put(path, st, parsed)
    if parsed is None:
        parsed = read_skill_file(path, policy.split)
    return policy.validate(path, parsed, root)


def discover_roots(
    workspace: Path, home: Path, user_home: Path, explicit: Iterable[Path] = ()
) -> list[Root]:
    """Every root to search, highest rank first."""
    roots: list[Root] = []
    scope, rank = ROOT_RANKS["--skills-dir / MCA_SKILLS_DIRS"]
    for i, d in enumerate(explicit):
        roots.append(Root(resolved(d), scope, rank - i))  # earlier given wins
    _, chain = project_dirs(workspace, user_home)  # above the workspace: only yours
    for depth, d in enumerate(chain[::-1][:MAX_PARENT_LEVELS]):
        for kind in ("<dir>/.mca/skills", "<dir>/.agents/skills"):
            scope, rank = ROOT_RANKS[kind]
            roots.append(Root(d / kind.split("/", 1)[1], scope, rank - PARENT_STEP * depth))
    for kind, path in (
        ("$MCA_HOME/skills", home / "skills"),
        ("~/.agents/skills", user_home / ".agents" / "skills"),
    ):
        scope, rank = ROOT_RANKS[kind]
        roots.append(Root(path, scope, rank))
    seen: set[Path] = set()
    unique = []
    for r in roots:
        key = resolved(r.path) if exists(r.path) else r.path
        if key not in seen:
            seen.add(key)
            unique.append(r)
    return unique


Stamp = tuple[int, int, int]  # (inode, size, mtime) of a path, symlinks followed: what a
# signature compares (mca.skills.cache keys its entries more strictly, with ctime too)


def stamp(st: os.stat_result) -> Stamp:
    return st.st_ino, st.st_size, st.st_mtime_ns


@dataclass
class ScanResult:
    """Candidates found under the roots, and problems with the walk itself."""

    candidates: list[Candidate] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    visited: dict[str, int] = field(default_factory=dict)  # root -> directories visited
    dirs: list[str] = field(default_factory=list)  # every directory the walk listed
    seen: dict[str, Stamp | None] = field(default_factory=dict)  # stat keys, as the walk saw


def find_skill_files(
    root: Path,
    depth_limit: int = DEPTH_LIMIT,
    dir_cap: int = DIR_CAP,
    unreadable: list[tuple[str, OSError]] | None = None,
    listed: list[str] | None = None,
    seen: dict[str, Stamp | None] | None = None,
) -> tuple[list[Path], list[Path], int, bool]:
    """(SKILL.md files, symlinked SKILL.md files, dirs visited, truncated) below one root.

    Directories that cannot be read are skipped and, when `unreadable` is given, listed there.
    `seen` is given the stat key of every directory and SKILL.md the walk looked at.
    """
    seen = {} if seen is None else seen
    found: list[Path] = []
    symlinked: list[Path] = []
    visited: set[tuple[int, int]] = set()
    stack: list[tuple[str, int]] = [(str(root), 0)]
    count = 0
    while stack:
        d, depth = stack.pop()
        try:
            st = os.stat(d)  # follows symlinks: (device, inode) names the real directory
        except OSError as e:
            seen[d] = None
            if unreadable is not None and os.path.lexists(d):
                unreadable.append((d, e))
            continue
        seen[d] = st.st_ino, st.st_size, st.st_mtime_ns  # stamp(st), inline: thousands
        key = (st.st_dev, st.st_ino)
        if key in visited:
            continue  # a symlink cycle, or the same directory reached twice
        visited.add(key)
        count += 1
        if count > dir_cap:
            return found, symlinked, count - 1, True
        path = os.path.join(d, SKILL_FILE)
        skill = _skill_file(path, seen)
        if skill is not None:  # a skill directory: never listed, never descended into
            (symlinked if skill else found).append(Path(path))
            continue
        try:
            entries = list(os.scandir(d))
        except OSError as e:
            if unreadable is not None:
                unreadable.append((d, e))
            continue
        if listed is not None:
            listed.append(d)
        if depth >= depth_limit:
            continue
        subdirs = [
            sub
            for sub in entries
            if sub.name not in SKIP_DIRS and not sub.name.startswith(".") and _entry_is_dir(sub)
        ]
        for sub in sorted(subdirs, key=lambda x: x.name, reverse=True):
            stack.append((sub.path, depth + 1))
    return found, symlinked, count, False


def _skill_file(path: str, seen: dict[str, Stamp | None]) -> bool | None:
    """Whether `path` (a directory's SKILL.md) is a symlink, or None when there is none: one
    lstat, no listing (a directory holding a SKILL.md is a skill, whatever else it holds)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            seen[path] = stamp(os.stat(path))
        except OSError:
            seen[path] = None
        return True
    seen[path] = stamp(st)
    return False


def scan_roots(
    roots: Iterable[Root],
    depth_limit: int = DEPTH_LIMIT,
    dir_cap: int = DIR_CAP,
    policy: Policy = PRODUCTION,
    cache: ParseCache | None = None,
) -> ScanResult:
    """Walk every root and parse every SKILL.md found."""
    with gc_paused():
        result = _scan(roots, depth_limit, dir_cap, policy, cache)
    if cache is not None:
        cache.save()
    return result


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Bulk loading keeps nearly every object it makes; collecting meanwhile is wasted work.

    When the outermost pause ends, what exists then is frozen (gc.freeze): the skills live as
    long as the session, and every later collection would otherwise walk them all again (tens
    of thousands of objects with thousands of skills; the collections at exit too: `mca -p`
    with no skills ends ~60 ms sooner). A frozen object that is let go is still freed by its
    reference count; only a reference cycle among them would outlive its use."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.freeze()
            gc.enable()


def _entry_is_dir(e: os.DirEntry[str]) -> bool:
    try:
        return e.is_dir()
    except OSError:
        return False


def _project_boundary(root: Root) -> Path | None:
    """A project root (<dir>/.mca/skills) may only hold skills that really are inside <dir>."""
    if root.scope != "project":
        return None
    return resolved(root.path.parent.parent)


def _inside(path: Path, boundary: Path) -> bool:
    try:
        return path.resolve().is_relative_to(boundary)
    except (OSError, RuntimeError):
        return False


def _scan(
    roots: Iterable[Root],
    depth_limit: int,
    dir_cap: int,
    policy: Policy,
    cache: ParseCache | None,
) -> ScanResult:
    result = ScanResult()
    for root in roots:
        unreadable: list[tuple[str, OSError]] = []
        files, symlinked, visited, truncated = find_skill_files(
            root.path, depth_limit, dir_cap, unreadable, result.dirs, result.seen
        )
        for where, err in unreadable:
            message = (
                f"cannot read this directory ({err.strerror or err}); skills in it are skipped"
            )
            result.diagnostics.append(Diagnostic("unreadable-dir", where, message))
        result.visited[str(root.path)] = visited
        if truncated:
            result.diagnostics.append(
                Diagnostic(
                    "scan-truncated",
                    str(root.path),
                    f"stopped after visiting {dir_cap} directories under this root; skills"
                    " deeper in it were not found (move them up or use --skills-dir)",
                )
            )
        for path in symlinked:
            cand = Candidate(path, root)
            cand.diagnostics.append(
                Diagnostic(
                    "symlinked-entry",
                    str(path),
                    "SKILL.md is a symlink; mca only loads a real file (symlink the directory"
                    " instead)",
                )
            )
            result.candidates.append(cand)
        boundary = _project_boundary(root)
        for path in files:
            if boundary is not None and not _inside(path, boundary):
                cand = Candidate(path, root)
                cand.diagnostics.append(
                    Diagnostic(
                        "outside-project",
                        str(path),
                        f"this project skill resolves to {resolved(path)}, outside {boundary};"
                        " a repository's skills must live inside it (not loaded)",
                    )
                )
                result.candidates.append(cand)
                continue
            result.candidates.append(load_candidate(path, root, policy, cache))
    return result


def resolve_collisions(candidates: list[Candidate]) -> list[Diagnostic]:
    """Highest rank wins; lower ranks are shadowed; equal ranks are all withheld."""
    diags: list[Diagnostic] = []
    by_name: dict[str, list[Candidate]] = {}
    for c in candidates:
        if c.skill is not None:  # names equal after NFKC are one name (ｃａｌｃ is calc)
            by_name.setdefault(unicodedata.normalize("NFKC", c.skill.name), []).append(c)
    for name, group in by_name.items():
        if len(group) < 2:
            continue
        group.sort(key=lambda c: -(c.root.rank if c.root else 0))
        top = group[0].root.rank if group[0].root else 0
        best = [c for c in group if (c.root.rank if c.root else 0) == top]
        if len(best) > 1:
            paths = " and ".join(str(c.path) for c in best)
            for c in best:
                d = Diagnostic(
                    "duplicate-name",
                    str(c.path),
                    f"two skills named {name!r} at the same rank: {paths}; both are withheld"
                    " (rename one)",
                )
                c.diagnostics.append(d)
                c.status = "withheld"
                diags.append(d)
        winner = best[0] if len(best) == 1 else None
        for c in group[len(best) :]:
            won = f"{winner.path} ({winner.root.scope if winner.root else ''})" if winner else "-"
            d = Diagnostic(
                "shadowed",
                str(c.path),
                f"skill {name!r} at {c.path} is shadowed by {won}, which ranks higher",
            )
            c.diagnostics.append(d)
            c.status = "shadowed"
            diags.append(d)
    return diags
