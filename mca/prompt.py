"""The system prompt, kept as named pieces so the ledger can price each one."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mca.errors import PathRefused
from mca.fsutil import read_head
from mca.provenance import DATA_NOTICE, defang
from mca.tools.paths import resolve_in

AGENTS_FILE = "AGENTS.md"
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

    def pieces(self) -> list[tuple[str, str]]:
        """(label, text) for every non-empty piece."""
        out = [("system base prompt", self.base)]
        if self.agents:
            out.append(("AGENTS.md", self.agents))
        if self.catalog:
            out.append(("skill catalog (stage one)", self.catalog))
        return out

    def exact_pieces(self) -> list[tuple[str, str]]:
        """Pieces whose texts concatenate to exactly `text` (separators go with the next)."""
        return [(label, ("\n\n" if i else "") + t) for i, (label, t) in enumerate(self.pieces())]

    @property
    def text(self) -> str:
        return "\n\n".join(text for _, text in self.pieces())


def read_agents_md(root: Path) -> tuple[str, str]:
    """(AGENTS.md at the workspace root, wrapped and capped, or ''; a problem to report, or '').

    Read like any untrusted file: it must resolve inside the workspace and be a regular file.
    """
    if not os.path.lexists(root / AGENTS_FILE):
        return "", ""
    try:
        target = resolve_in(root, AGENTS_FILE)
        data, size = read_head(target, root.resolve(), limit=MAX_AGENTS_CHARS * 4)
    except PathRefused as e:
        return "", f"{AGENTS_FILE} not used: {e}"
    except OSError as e:
        return "", f"{AGENTS_FILE} not used: {e.strerror or e}"
    text = data.decode("utf-8", errors="replace")
    if len(text) > MAX_AGENTS_CHARS or size > len(data):
        text = text[:MAX_AGENTS_CHARS] + f"\n[AGENTS.md cut at {MAX_AGENTS_CHARS} characters]"
    body = defang(text.strip())
    return f"Project instructions from {AGENTS_FILE}:\n<agents_md>\n{body}\n</agents_md>", ""


def build_system_prompt(root: Path, catalog: str = "", agents: str = "") -> SystemPrompt:
    """Base prompt + AGENTS.md (as read by read_agents_md) + the skill catalog."""
    return SystemPrompt(BASE.format(root=root) + "\n" + DATA_NOTICE, agents, catalog)
