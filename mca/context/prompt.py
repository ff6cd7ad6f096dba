"""The system prompt, kept as named pieces so the ledger can price each one."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mca.context.project import project_dirs
from mca.context.provenance import DATA_NOTICE, defang
from mca.fs.careful import read_head, resolved
from mca.text.sanitize import one_line
from mca.workspace.paths import inside

__all__ = [
    "AGENTS_FILE",
    "BASE",
    "DOC_FILES",
    "MAX_AGENTS_CHARS",
    "SystemPrompt",
    "build_system_prompt",
    "doc_pieces",
    "project_doc_dirs",
    "read_agents_md",
]

AGENTS_FILE = "AGENTS.md"
DOC_FILES = (AGENTS_FILE, "CLAUDE.md")  # CLAUDE.md only where a directory has no AGENTS.md
MAX_AGENTS_CHARS = 32_000

BASE = """\
You are mca, a careful coding agent working in the user's workspace: {root}
Work in small verified steps. Read files before editing them. Use the tools:
read_file, list_dir, find_files, search_text to look; edit_file for small changes and
write_file for new or rewritten files (every write is snapshotted and can be undone with /undo);
run_command to build and test; update_plan to show your steps on longer tasks.
Paths are relative to the workspace. When you are done, answer briefly: what you changed,
how you checked it, and anything left to do."""


@dataclass(frozen=True)
class SystemPrompt:
    """The system prompt's pieces, in the order they are sent."""

    base: str
    agents: str = ""
    catalog: str = ""

    def _parts(self) -> list[list[tuple[str, str]]]:
        """The parts a blank line separates, each as its labelled pieces."""
        parts = [[("system base prompt", self.base)]]
        if self.agents:
            parts.append(doc_pieces(self.agents))
        if self.catalog:
            parts.append([("skill catalog (stage one)", self.catalog)])
        return parts

    def docs(self) -> list[tuple[str, str]]:
        """(path, text as sent) of each instructions file, nearest last."""
        return doc_pieces(self.agents) if self.agents else []

    def pieces(self) -> list[tuple[str, str]]:
        """(label, text) for every non-empty piece; each instructions file is one, labelled
        with its path."""
        return [piece for part in self._parts() for piece in part]

    def exact_pieces(self) -> list[tuple[str, str]]:
        """Pieces whose texts concatenate to exactly `text` (separators go with the next)."""
        out: list[tuple[str, str]] = []
        for i, ((label, first), *rest) in enumerate(self._parts()):
            out += [(label, ("\n\n" if i else "") + first), *rest]
        return out

    @property
    def text(self) -> str:
        return "\n\n".join("".join(t for _, t in part) for part in self._parts())


# A file's block starts a line (defang escapes any `<agents_md` inside a file's text).
_DOC_BLOCK = re.compile(r'^<agents_md path="([^"\n]*)">$', re.M)


def doc_pieces(agents: str) -> list[tuple[str, str]]:
    """The instructions cut where each file's block starts, each piece labelled with that
    file's path (the first also carries the heading); they concatenate to `agents`."""
    found = list(_DOC_BLOCK.finditer(agents))
    if not found:
        return [("project instructions", agents)]
    cuts = [0, *(m.start() for m in found[1:]), len(agents)]
    return [(m.group(1), agents[cuts[i] : cuts[i + 1]]) for i, m in enumerate(found)]


def project_doc_dirs(workspace: Path, user_home: Path | None = None) -> tuple[Path, list[Path]]:
    """(the git root, or the workspace when there is none; the directories from it down to the
    workspace, in that order): see mca.context.project for which directories above count."""
    return project_dirs(workspace, user_home)


def _read_doc(top: Path, directory: Path, name: str, room: int) -> tuple[str, str]:
    """(text, problem) of one instructions file, cut to `room` characters: a regular file, or
    a symlink whose target stays inside the directory it was found in."""
    label = str((directory / name).relative_to(top))
    where, target = resolved(directory), resolved(directory / name)
    if not inside(target, where):
        return "", f"{label} not used: it leads to {target}, outside its directory {where}"
    try:
        data, size = read_head(target, where, limit=room * 4)
    except OSError as e:
        return "", f"{label} not used: {e.strerror or e}"
    text = data.decode("utf-8", errors="replace")
    if len(text) > room or size > len(data):
        text = text[:room] + f"\n[{label} cut: project instructions are capped at"
        text += f" {MAX_AGENTS_CHARS} characters in all]"
    return text, ""


def read_agents_md(root: Path, user_home: Path | None = None) -> tuple[str, str]:
    """(the project's instructions, wrapped and capped, or ''; problems to report, or '').

    Like Codex: from the git root down to the workspace, each directory's AGENTS.md (or, where
    there is none, its CLAUDE.md), in that order, so the nearest file speaks last. Each is read
    like any untrusted file: a regular file, or a link that stays in its own directory.
    """
    top, dirs = project_doc_dirs(root, user_home)
    parts: list[str] = []
    problems: list[str] = []
    room = MAX_AGENTS_CHARS
    for d in dirs:
        name = next((n for n in DOC_FILES if os.path.lexists(d / n)), None)
        if name is None or room <= 0:
            continue
        text, problem = _read_doc(top, d, name, room)
        if problem:
            problems.append(problem)
        elif text.strip():
            room -= len(text)
            label = str((d / name).relative_to(top))
            shown = one_line(label).replace('"', "'")
            parts.append(f'<agents_md path="{shown}">\n{defang(text.strip())}\n</agents_md>')
    if not parts:
        return "", "; ".join(problems)
    return "Project instructions (AGENTS.md):\n" + "\n".join(parts), "; ".join(problems)


def build_system_prompt(root: Path, catalog: str = "", agents: str = "") -> SystemPrompt:
    """Base prompt + AGENTS.md (as read by read_agents_md) + the skill catalog."""
    return SystemPrompt(BASE.format(root=root) + "\n" + DATA_NOTICE, agents, catalog)
