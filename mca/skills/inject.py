"""Stages two and three: skill bodies in structured tags, scripts as command lines (never read)."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from mca.context.provenance import defang
from mca.fs.careful import is_dir
from mca.skills.model import RESOURCE_DIRS, Skill, xml_escape

__all__ = [
    "HEADER",
    "INTERPRETERS",
    "MAX_LISTED",
    "RUN_SENTENCE",
    "Block",
    "command_line",
    "list_resources",
    "render_skill",
    "runnable",
    "stage_two_text",
    "unrunnable_scripts",
]

# Interpreter by extension; a script without one of these is run directly (it must be executable).
INTERPRETERS = {
    ".py": "python3",
    ".sh": "bash",
    ".bash": "bash",
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".ts": "npx tsx",
    ".rb": "ruby",
    ".pl": "perl",
    ".php": "php",
}
MAX_LISTED = 50
RUN_SENTENCE = (
    "To use a script, run its command line with run_command (add arguments as its skill says);"
    " do not read or rewrite the script."
)
HEADER = (
    "mca loaded these skills for this turn because your request matched them (reasons are in"
    " the ledger). Follow them; paths inside a skill are relative to its dir."
)


@dataclass
class Block:
    """One rendered skill: the full tagged text and its parts, for the ledger."""

    name: str
    text: str
    body: str
    attachments: list[str] = field(default_factory=list)  # stage three command lines
    partial: str = ""  # 'partial: N of M chars; the rest: ...' when only the head fitted


def list_resources(skill_dir: Path) -> dict[str, list[str]]:
    """File names under scripts/, references/, assets/ (names only; contents are never read)."""
    out: dict[str, list[str]] = {}
    for sub in RESOURCE_DIRS:
        if names := _listed(skill_dir, sub):
            out[sub] = names
    return out


def _listed(skill_dir: Path | str, sub: str) -> list[str]:
    """Up to MAX_LISTED file names under one resource directory, relative to the skill."""
    base = os.path.join(skill_dir, sub)
    if not is_dir(base):
        return []
    names: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        rel = os.path.join(sub, dirpath[len(base) + 1 :]) if dirpath != base else sub
        names += [os.path.join(rel, f) for f in sorted(filenames) if not f.startswith(".")]
        if len(names) >= MAX_LISTED:
            break
    return names[:MAX_LISTED]


def runnable(script: Path) -> bool:
    """A script mca can offer as a command line: a known interpreter, or the execute bit."""
    return script.suffix.lower() in INTERPRETERS or os.access(script, os.X_OK)


def command_line(script: Path, shown: str | None = None) -> str:
    """A runnable command line for a script: interpreter by extension, then the script's path
    as the model was told it (relative to the workspace, where commands run, or ~/...)."""
    interpreter = INTERPRETERS.get(script.suffix.lower())
    where = shown if shown is not None else str(script)
    if where.startswith("~/"):
        quoted = "~/" + shlex.quote(where[2:])  # the shell expands ~ only outside quotes
    else:
        quoted = shlex.quote(where if "/" in where else f"./{where}")
    return f"{interpreter} {quoted}" if interpreter else quoted


def unrunnable_scripts(skill_dir: Path | str) -> list[str]:
    """scripts/ files that have no known interpreter and no execute bit (names only)."""
    return [rel for rel in _listed(skill_dir, "scripts") if not runnable(Path(skill_dir, rel))]


def render_skill(skill: Skill) -> Block:
    """The tagged block for one skill."""
    resources = list_resources(skill.dir)
    scripts = resources.get("scripts", [])
    base = skill.dir_label
    commands = [
        command_line(skill.dir / rel, f"{base}/{Path(rel).as_posix()}")
        for rel in scripts
        if runnable(skill.dir / rel)
    ]
    parts = [
        f'<skill name="{xml_escape(skill.name, True)}" dir="{xml_escape(base, True)}">',
        defang(skill.body.strip()),
    ]
    listed = [
        f"{sub}/: " + defang(", ".join(Path(n).relative_to(sub).as_posix() for n in names))
        for sub, names in resources.items()
    ]
    if listed:
        parts.append("<resources>\n" + "\n".join(listed) + "\n</resources>")
    if commands:
        shown = defang("\n".join(commands))
        parts.append("<scripts>\n" + RUN_SENTENCE + "\n" + shown + "\n</scripts>")
    parts.append("</skill>")
    return Block(skill.name, "\n".join(parts), parts[1], commands)


def stage_two_text(blocks: list[Block]) -> str:
    """The one user-role message for this turn's skills; '' when nothing loaded."""
    if not blocks:
        return ""
    return HEADER + "\n\n" + "\n\n".join(b.text for b in blocks)
