"""`#` at the prompt: a line to remember, added to an AGENTS.md the model reads from the next
turn on (Claude Code's `#`, Gemini CLI's `/memory add`). `# text` adds it to the project's
AGENTS.md in the workspace (written through the tools' path: contained, snapshotted, /undo
reverts it); `#~ text` to the person's own, $MCA_HOME/AGENTS.md, read in every workspace. Either
way the change is shown as a diff and asked, as every edit in ask mode is."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mca.errors import McaError

if TYPE_CHECKING:
    from mca.session.session import Session
    from mca.ui.terminal import ReplUI

__all__ = ["USAGE", "added", "remember"]

USAGE = "usage: # TEXT remembers it in the project's AGENTS.md; #~ TEXT in yours (every workspace)"
NOTES_HEADING = "## Notes"


def added(old: bytes | None, note: str) -> bytes:
    """The file with `note` as one more bullet under its Notes heading (made at its end when it
    has none), every other byte as it was."""
    text = (old or b"").decode("utf-8", errors="surrogateescape")
    bullet = f"- {' '.join(note.split())}\n"
    if NOTES_HEADING not in text.splitlines():
        ends = len(text) - len(text.rstrip("\n"))  # one blank line before the heading
        sep = "" if not text.strip() else "\n" * max(2 - ends, 0)
        text = f"{text}{sep}{NOTES_HEADING}\n\n{bullet}"
    else:
        lines = text.splitlines(keepends=True)
        at = lines.index(f"{NOTES_HEADING}\n") if f"{NOTES_HEADING}\n" in lines else len(lines)
        end = at + 1
        while end < len(lines) and not lines[end].startswith("#"):
            end += 1
        while end > at + 1 and not lines[end - 1].strip():
            end -= 1
        if not lines[end - 1].endswith("\n"):
            lines[end - 1] += "\n"
        lines.insert(end, bullet)
        text = "".join(lines)
    return text.encode("utf-8", errors="surrogateescape")


def remember(line: str, session: Session, ui: ReplUI) -> None:
    """`# text` or `#~ text`: the diff, the question, then the write (or a line saying not)."""
    from mca.text.diff import file_diff
    from mca.ui.diff_view import draw_diff

    mine = line.startswith("#~")
    note = line[2 if mine else 1 :].strip()
    if not note:
        ui.say(USAGE)
        return
    try:
        path, old = session.instructions(mine)
        new = added(old, note)
        label = str(path) if mine else path.name  # the project's, as the workspace names it
        ui.show_diff(draw_diff(file_diff(label, old, new)))
        if not ui.confirm(f"add this note to {label}?"):
            ui.say(f"not remembered: {path} left as it is")
            return
        where = session.remember(mine, new)
    except McaError as e:
        ui.say(f"not remembered: {e}")
        return
    undo = "" if mine else "; /undo reverts it"
    ui.say(f"remembered in {where}: the model reads it from the next turn on{undo}")
