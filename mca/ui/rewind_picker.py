"""/rewind in the REPL: pick a turn of this conversation, take files and conversation back to
before it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mca.session.session import Session
    from mca.ui.terminal import ReplUI


def _pick(listed: list[tuple[int, str]], ui: ReplUI) -> str:
    """The turn the person picks from the list ('' for none)."""
    ui.say("turns of this conversation:\n" + "\n".join(f"{n:>4}. {s}" for n, s in listed))
    first, last = listed[0][0], listed[-1][0]
    question = f"rewind to before which turn? [{first}-{last}, Enter: none] "
    try:
        if last <= 9:  # one key picks: a digit, Enter for none
            digits = "".join(str(n) for n, _ in listed)
            key = ui.key(digits, lambda: ui.prompt_line(question))
            if key is not None:
                ui.say(key or "none")
                return key
        return ui.ask(question).strip()
    except KeyboardInterrupt:
        return ""


def rewind(session: Session, ui: ReplUI, wanted: str) -> None:
    """Rewind to before turn `wanted` ('' to pick from a list)."""
    from mca.ui.render import rewind_lines

    listed = session.turns_listed()
    if not listed:
        ui.say("nothing to rewind: this conversation has no turn yet")
        return
    wanted = wanted or _pick(listed, ui)
    if not wanted:
        ui.say("nothing rewound")
        return
    numbers = [n for n, _ in listed]
    if not wanted.isdigit() or int(wanted) not in numbers:
        shown = ", ".join(map(str, numbers))
        ui.say(f"no turn {wanted!r} in this conversation (its turns: {shown}); nothing rewound")
        return
    ui.say(rewind_lines(session.rewind(int(wanted))))
