"""What every tool shares: the context it runs in and the Tool record."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mca.errors import ToolError
from mca.tools.schema import check_object
from mca.tools.snapshots import SnapshotStore
from mca.types import Message


class SkillAccess(Protocol):
    """What read_file needs from the skill runtime to treat reading a skill as activating it."""

    def skill_named(self, target: Path) -> str | None: ...

    def activate(
        self, name: str, turn: int, history: Sequence[Message]
    ) -> tuple[bool, str, Message | None]: ...


Approve = Callable[[str], bool]
ApproveWrite = Callable[[str, str, str], bool]  # (path, why it is protected, diff) -> yes?
ApproveEdit = Callable[[str, str], bool]  # (path, diff) -> yes? (the "ask" mode)
EventSink = Callable[[str, Mapping[str, Any]], None]


def _no_events(kind: str, data: Mapping[str, Any]) -> None:
    return None


def _refuse(command: str) -> bool:
    return False


def _refuse_write(path: str, reason: str, diff: str) -> bool:
    return False


def _accept_edit(path: str, diff: str) -> bool:
    return True


@dataclass
class ToolContext:
    """Where tools run and whom they ask. One per session; the loop sets `turn`."""

    root: Path
    snapshots: SnapshotStore
    approve: Approve = _refuse
    emit: EventSink = _no_events
    # Skill directories the model may read from (name -> resolved dir), outside the workspace too.
    skill_dirs: dict[str, Path] = field(default_factory=dict)
    plan: list[dict[str, str]] = field(default_factory=list)
    turn: int = 0
    approve_write: ApproveWrite = _refuse_write  # writes to protected paths (never --yes)
    home: Path | None = None  # $MCA_HOME: protected wherever it is
    home_dir: Path | None = None  # the user's ~, for skill paths the model was given as ~/...
    skills: SkillAccess | None = None  # reading a skill is activating it (the same gates)
    mode: str = "auto-edit"  # the approval mode (mca.config.MODES); /mode changes it
    approve_edit: ApproveEdit = _accept_edit  # asked before each edit in "ask" mode
    history: Callable[[], Sequence[Message]] = list  # the conversation so far (for activation)
    pending: list[Message] = field(default_factory=list)  # messages to add after tool results
    touched: set[str] = field(default_factory=set)  # workspace paths read or written this turn


ToolFn = Callable[[ToolContext, Mapping[str, Any]], str]


@dataclass(frozen=True)
class Tool:
    """A registered tool: name, schema and the function that runs it."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    run: ToolFn

    def invoke(self, ctx: ToolContext, args: Mapping[str, Any]) -> str:
        """Check the model's arguments against the schema, then run."""
        check_object(args, self.parameters)
        return self.run(ctx, args)


READ_ONLY = "mca is in read-only mode: nothing may be written or run (the user can /mode it)"


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
