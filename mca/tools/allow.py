"""What an "always" answer covers: one program, found where it really is, with the same leading
arguments, and nothing a shell would read as more than one command.

`git status` approved "always" covers `git status --short`, never `./tools/git status` (another
file), `git -c core.fsmonitor=… status` (other leading arguments), `git status; rm -rf ~` (more
than one command) or `GIT_DIR=x git status` (an assignment first). The key is the program's
resolved path, so a repository that puts its own `git` earlier on PATH gets no free pass.
With the sandbox on, an "always" only ever lets a command run inside it without a question.
"""

from __future__ import annotations

import enum
import os
import shlex
import shutil
from dataclasses import dataclass, field

__all__ = [
    "SHELL_SYNTAX",
    "AlwaysRules",
    "Answer",
    "CommandKey",
    "CommandQuestion",
    "key_for",
    "simple_argv",
]

# Anything that makes a shell do more than run one program with literal arguments.
SHELL_SYNTAX = set(";&|`$<>(){}*?[]~!#\\\n\r") | {"\t"}


class Answer(enum.StrEnum):
    """A person's answer to a command question, or UNASKED: there was nobody to ask (no
    terminal), which the model is told as such, never as the person's no."""

    YES = "yes"
    NO = "no"
    ALWAYS = "always"
    UNASKED = "unasked"


@dataclass(frozen=True)
class CommandQuestion:
    """What a person is asked before a command runs: the command whole, where it runs, and
    what an "always" would cover ('' when not offered). `more` is set when a command that hit
    the sandbox's walls asks to run again with one more right ("the network"); "always" is
    never offered for that."""

    command: str
    sandbox: str = ""  # '' unsandboxed; else how it is contained ("workspace-write, no network")
    always: str = ""
    more: str = ""
    wall: str = ""  # with `more`: what the sandbox stopped


@dataclass(frozen=True)
class CommandKey:
    """A simple command: the program's real path and the arguments up to the first option."""

    program: str
    prefix: tuple[str, ...]

    def shown(self) -> str:
        name = os.path.basename(self.program)
        return " ".join([name, *self.prefix])


def simple_argv(command: str) -> list[str] | None:
    """The words of a command with no shell syntax but quotes (with $, `, \\ and ! excluded,
    quoted text is literal), else None."""
    text = command.strip()
    if not text or any(c in SHELL_SYNTAX for c in text):
        return None
    try:
        words = shlex.split(text)
    except ValueError:  # an unclosed quote
        return None
    if not words or "=" in words[0]:
        return None
    return words


def key_for(command: str, cwd: str, path: str) -> CommandKey | None:
    """The key of a simple command, resolved in `cwd` on `path`; None when not simple or the
    program cannot be found."""
    argv = simple_argv(command)
    if argv is None:
        return None
    program = argv[0]
    if "/" in program:
        found = os.path.realpath(os.path.join(cwd, program))
        if not os.access(found, os.X_OK):
            return None
    else:
        which = shutil.which(program, path=path)
        if which is None:
            return None
        found = os.path.realpath(which if os.path.isabs(which) else os.path.join(cwd, which))
    prefix = []
    for word in argv[1:]:
        if word.startswith("-"):
            break
        prefix.append(word)
    return CommandKey(found, tuple(prefix))


@dataclass
class AlwaysRules:
    """The "always" answers of one session."""

    keys: set[CommandKey] = field(default_factory=set)
    edits: bool = False  # "always" to an edit in ask mode: edits apply, commands still ask

    def covers(self, command: str, cwd: str, path: str) -> bool:
        """Whether an earlier "always" covers this command: same program, and its first
        arguments are exactly one approved prefix (options before them are not allowed)."""
        argv = simple_argv(command)
        key = key_for(command, cwd, path) if argv is not None else None
        if argv is None or key is None:
            return False
        for k in self.keys:
            n = len(k.prefix)
            if k.program == key.program and tuple(argv[1 : 1 + n]) == k.prefix:
                return True
        return False

    def add(self, key: CommandKey) -> None:
        self.keys.add(key)
