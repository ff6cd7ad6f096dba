"""`!command` in the REPL: the person's own command, run at once in the workspace (no approval:
they typed it); its output joins the conversation when they say so."""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mca.session.session import Session
    from mca.ui.terminal import ReplUI

MAX_SHELL_CHARS = 16_000  # of a !command's output added to the conversation


def run_shell(session: Session, ui: ReplUI, command: str) -> None:
    """Run it with its output shown as it comes, then offer it to the conversation."""
    import os

    from mca.tools.command import CommandInterrupted, child_env, execute

    if not command:
        ui.say("usage: !COMMAND (runs in the workspace, no approval: you typed it)")
        return
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    ui.say(f"$ {command}")
    try:
        done = execute(
            command,
            str(session.config.workspace),
            None,
            on_chunk=lambda b: ui.raw(decoder.decode(b)),
            env=child_env(os.environ, typed=True),  # yours: only mca's keys leave it
        )
        code, output = done.code, done.output
    except CommandInterrupted as e:
        ui.raw(decoder.decode(b"", final=True))
        ui.say("\n(interrupted; its process group was killed)")
        code, output = None, e.output
    ui.raw(decoder.decode(b"", final=True))
    ui.end_raw()
    status = "killed" if code is None else f"exit {code}"
    ui.say(f"({status})")
    try:
        if not ui.confirm("add the command and its output to the conversation?"):
            return
    except KeyboardInterrupt:
        return
    kept = output if len(output) <= MAX_SHELL_CHARS else "…" + output[-MAX_SHELL_CHARS:]
    session.add_shell_message(
        f"I ran this in the workspace myself: `{command}` ({status}). Its output:\n{kept}"
    )
    ui.say("added: the model sees it with your next message")
