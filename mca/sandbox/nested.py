"""Every repository inside the workspace, kept as the workspace's own `.git` is: read-only in the
command's mount namespace, or recorded before and put back after it where there is none; and
what a command leaves that makes git run a program (a new repository's `core.fsmonitor`, an
executable hook …) named afterwards, to the person and to the model.

Only a command that may write the workspace needs this: in read-only mode nothing in it changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from mca.workspace.gitconfig import Danger, dangers
from mca.workspace.repos import Finder, Found

__all__ = ["Before", "Repositories", "report"]

MAX_LINES = 8  # settings named one by one; the rest are counted


Identity = tuple[int, int]  # a git directory's device and inode: what it is wherever it is


@dataclass(frozen=True)
class Before:
    """The repositories before one command, and what in each made git run programs already,
    by the git directory's identity (a repository moved or renamed is still itself; a new one
    at an old one's place is not). Each danger's file is named inside its git directory."""

    found: Found = field(default_factory=Found)
    dangers: dict[Identity, frozenset[Danger]] = field(default_factory=dict)


def _identity(path: Path) -> Identity | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@dataclass
class Repositories:
    """One session's view of the workspace's repositories."""

    workspace: Path
    finder: Finder | None = None
    said: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.finder is None:
            self.finder = Finder(self.workspace)

    def before(self) -> tuple[Before, list[str]]:
        """The repositories now and what in each runs a program (read from their files,
        whether or not the command may write them), and what to say once per session about
        the search."""
        assert self.finder is not None
        found = self.finder.find()
        notes = []
        if found.missed and found.missed not in self.said:
            self.said.add(found.missed)
            notes.append(found.missed)
        known = {}
        for d in found.git_dirs:
            ident = _identity(d)
            if ident is not None:
                known[ident] = dangers(d, "")
        return Before(found, known), notes

    def protect(self, found: Found, already: list[Path]) -> tuple[list[Path], list[Path]]:
        """(git directories, `.git` files and links) to keep, but those inside a path kept
        already (a submodule's git directory inside the workspace's `.git`)."""

        def inside(p: Path) -> bool:
            return any(p == a or p.is_relative_to(a) for a in already)

        dirs = [d for d in found.git_dirs if not inside(d)]
        pointers = [p for p in found.pointers if not inside(p)]
        return dirs, pointers

    def after(self, before: Before) -> list[str]:
        """What makes git run a program now that did not before the command, compared by what
        the files say, in every git directory there is now: a new one, one moved or renamed,
        one put in the place of another (a mount kept the old one, wherever it went), one the
        command could write."""
        assert self.finder is not None
        now = self.finder.find()
        new: list[tuple[str, str, str]] = []
        for d in now.git_dirs:
            ident = _identity(d)
            was = before.dangers.get(ident, frozenset()) if ident is not None else frozenset()
            folder = self._shown(d.parent if d.name == ".git" else d)
            shown = self._shown(d)
            added = dangers(d, "") - was
            new += [(folder, f"{shown}{file}", what) for file, what in sorted(added)]
        return report(new)

    def _shown(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix() if path != self.workspace else "."


def report(found: list[tuple[str, str, str]]) -> list[str]:
    """One line for each repository: (folder, file, setting) grouped by folder, the files and
    settings named (at most MAX_LINES of them, then a count)."""
    by: dict[str, dict[str, list[str]]] = {}
    for folder, file, what in found:
        by.setdefault(folder, {}).setdefault(file, []).append(what)
    lines = []
    for folder, files in by.items():
        said = []
        for file, whats in files.items():
            hook = whats == ["an executable hook"]
            shown = ", ".join(whats[:MAX_LINES]) + (" …" if len(whats) > MAX_LINES else "")
            said.append(f"{file} is an executable hook" if hook else f"{file} sets {shown}")
        where = "the workspace" if folder == "." else folder
        lines.append(
            "the command left settings that make git run a program: "
            + "; ".join(said[:MAX_LINES])
            + (f" and {len(said) - MAX_LINES} more" if len(said) > MAX_LINES else "")
            + f" (git may run them on its own: look before you run git in {where})"
        )
    return ["".join(c if c.isprintable() else "?" for c in line) for line in lines]
