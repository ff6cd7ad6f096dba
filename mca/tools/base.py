"""What every tool shares: the session's environment, the turn's state and the Tool record."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mca.errors import ToolError
from mca.events import EventSink, Notice
from mca.modes import DEFAULT_MODE
from mca.text.diff import FileDiff
from mca.tools.allow import AlwaysRules, Answer, CommandQuestion
from mca.tools.schema import check_object
from mca.types import Message

if TYPE_CHECKING:
    from mca.sandbox.box import Sandbox
    from mca.workspace.store import WorkspaceStore

__all__ = [
    "READ_ONLY",
    "Approvals",
    "Asker",
    "NoSkills",
    "SkillAccess",
    "Tool",
    "ToolEnv",
    "ToolFn",
    "TurnState",
    "arg_int",
    "arg_str",
    "schema",
]


class SkillAccess(Protocol):
    """What the file tools need from the skill runtime: the skills' directories (readable
    outside the workspace too), and reading a skill counts as activating it: a SKILL.md is
    known by its real path, or by its inode (`st`: a hard link to it is the same file)."""

    def dirs(self) -> Mapping[str, Path]: ...

    def skill_named(self, target: Path, st: os.stat_result | None = None) -> str | None: ...

    def skill_in(self, directory: Path) -> str | None:
        """The loaded skill whose SKILL.md is in this directory, or None (the tools never name
        a skill's file themselves: that is the skill runtime's to know)."""
        ...

    def activate(
        self, name: str, turn: int, history: Sequence[Message]
    ) -> tuple[bool, str, Message | None]: ...

    def body_in_context(self, name: str, history: Sequence[Message]) -> str:
        """A skill's whole body, to read on past the part that fitted; raises ToolError."""
        ...


class NoSkills:
    """The skill access of a session with no skill runtime (tests, the registry check)."""

    def dirs(self) -> Mapping[str, Path]:
        return {}

    def skill_named(self, target: Path, st: os.stat_result | None = None) -> str | None:
        return None

    def skill_in(self, directory: Path) -> str | None:
        return None

    def activate(
        self, name: str, turn: int, history: Sequence[Message]
    ) -> tuple[bool, str, Message | None]:
        return False, f"skill:{name}: no skills are loaded in this session", None

    def body_in_context(self, name: str, history: Sequence[Message]) -> str:
        raise ToolError(f"skill:{name}: no skills are loaded in this session")


class Asker(Protocol):
    """Who answers when a tool needs a yes: the UI (each UI keeps these three together)."""

    def approve(self, question: CommandQuestion) -> Answer: ...  # a command

    def approve_write(self, path: str, reason: str, diff: FileDiff) -> bool: ...  # protected

    # each edit in "ask" mode: yes, no, or Answer.ALWAYS (every edit of this session)
    def approve_edit(self, path: str, diff: FileDiff) -> bool | Answer: ...


@dataclass
class Approvals:
    """The approval mode and who is asked. The one place the mode lives: /mode changes it
    here and the next tool call sees it."""

    ask: Asker
    mode: str = DEFAULT_MODE  # one of mca.modes.MODES
    always: AlwaysRules = field(default_factory=AlwaysRules)  # the session's "always" answers


@dataclass(frozen=True)
class ToolEnv:
    """What tools may use, built once per session."""

    workspace: WorkspaceStore  # the root, its snapshots and checkpoints
    approvals: Approvals
    emit: EventSink
    skills: SkillAccess = field(default_factory=NoSkills)
    home: Path | None = None  # $MCA_HOME: protected wherever it is
    user_home: Path | None = None  # the user's ~, for skill paths the model was given as ~/...
    sandbox: Sandbox | None = None  # where run_command's commands run (None or inactive: not)
    skill_roots: tuple[Path, ...] = ()  # where skills load from: writes there are protected
    secrets: tuple[str, ...] = ()  # keys a running command's output is scrubbed of as it comes
    pass_env: tuple[str, ...] = ()  # secret-named variables the model's commands keep (names)

    @property
    def root(self) -> Path:
        """The workspace's root: every path a tool takes is resolved inside it."""
        return self.workspace.root

    def before_change(self, turn: int) -> None:
        """A file write or a command is about to run in `turn`: checkpoint the workspace."""
        if warning := self.workspace.before_change(turn):
            self.emit(Notice(f"warning: {warning}"))


@dataclass
class TurnState:
    """What one turn's tool calls share. The agent makes one per turn and hands it to each
    tool; the next turn's pre-turn stage reads the paths this one touched."""

    number: int
    history: Sequence[Message] = ()  # the conversation so far (a skill read checks it)
    touched: set[str] = field(default_factory=set)  # workspace paths read or written
    pending: list[Message] = field(default_factory=list)  # to add after the tool results
    plan: list[dict[str, str]] = field(default_factory=list)  # the model's latest plan


ToolFn = Callable[[ToolEnv, TurnState, Mapping[str, Any]], str]


@dataclass(frozen=True)
class Tool:
    """A registered tool: name, schema and the function that runs it."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    run: ToolFn

    def invoke(self, env: ToolEnv, turn: TurnState, args: Mapping[str, Any]) -> str:
        """Check the model's arguments against the schema, then run."""
        check_object(args, self.parameters)
        return self.run(env, turn, args)


READ_ONLY = "mca is in read-only mode: nothing may be written (the user can /mode it)"


def schema(properties: Mapping[str, Any], required: list[str]) -> dict[str, Any]:
    """A JSON-schema object for tool parameters."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": required,
        "additionalProperties": False,
    }


def arg_str(args: Mapping[str, Any], key: str, *, required: bool = True, default: str = "") -> str:
    """A string argument, or a ToolError naming it."""
    value = args.get(key)
    if value is None:
        if required:
            raise ToolError(f"missing required argument {key!r}")
        return default
    if not isinstance(value, str):
        raise ToolError(f"argument {key!r} must be a string, got {type(value).__name__}")
    return value


def arg_int(args: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    """An integer argument within [lo, hi], or a ToolError naming it."""
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ToolError(f"argument {key!r} must be an integer")
    try:
        n = int(value)
    except (ValueError, OverflowError):
        raise ToolError(f"argument {key!r} must be an integer, got {value!r:.40}") from None
    if not lo <= n <= hi:
        raise ToolError(f"argument {key!r} must be between {lo} and {hi}, got {n}")
    return n
