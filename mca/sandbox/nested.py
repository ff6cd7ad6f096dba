"""Every repository inside the workspace, kept as the workspace's own `.git` is: read-only in the
command's mount namespace, or recorded before and put back after it where there is none; and
what a command leaves that makes git run a program (a new repository's `core.fsmonitor`, an
executable hook …) named afterwards, to the person and to the model.

Only a command that may write the workspace needs this: in read-only mode nothing in it changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mca.workspace.gitconfig import Danger, dangers
from mca.workspace.repos import Finder, Found

__all__ = ["Before", "Repositories", "report"]

MAX_LINES = 8  # settings named one by one; the rest are counted


@dataclass(frozen=True)
class Before:
    """The repositories before one command, and what in them ran programs already."""

    found: Found = field(default_factory=Found)
    dangers: dict[Path, frozenset[Danger]] = field(default_factory=dict)


@dataclass
class Repositories:
    """One session's view of the workspace's repositories."""

    workspace: Path
    finder: Finder | None = None
    said: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.finder is None:
            self.finder = Finder(self.workspace)

    def before(self, writable: bool) -> tuple[Before, list[str]]:
        """The repositories now (their settings too when the command may write them: a
        protected-paths grant), and what to say once per session about the search."""
        assert self.finder is not None
        found = self.finder.find()
        notes = []
        if found.missed and found.missed not in self.said:
            self.said.add(found.missed)
            notes.append(found.missed)
        known = {d: self._dangers(d) for d in found.git_dirs} if writable else {}
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
        """What makes git run a program now that did not before the command: in a repository
        it made, or (when it could write them) in one that was there."""
        assert self.finder is not None
        now = self.finder.find()
        old = set(before.found.git_dirs)
        new: list[tuple[str, str, str]] = []
        for d in now.git_dirs:
            if d in old and d not in before.dangers:
                continue  # read-only for the command, or put back
            folder = self._shown(d.parent if d.name == ".git" else d)
            added = self._dangers(d) - before.dangers.get(d, frozenset())
            new += [(folder, file, what) for file, what in sorted(added)]
        return report(new)

    def _shown(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix() if path != self.workspace else "."

    def _dangers(self, git_dir: Path) -> frozenset[Danger]:
        return dangers(git_dir, self._shown(git_dir))


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
