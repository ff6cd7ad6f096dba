"""The fixed registry of eight tools. Nothing at run time adds or removes one."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from mca.errors import ToolError
from mca.tools.base import Tool, schema
from mca.tools.command import DEFAULT_TIMEOUT, MAX_TIMEOUT, run_command
from mca.tools.edit import edit_file, write_file
from mca.tools.files import (
    MAX_READ_LINES,
    find_files,
    list_dir,
    read_file,
    search_text,
)
from mca.tools.line_window import LINE_CHARS
from mca.tools.plan import STATUSES, update_plan
from mca.types import ToolSpec

__all__ = ["REGISTRY", "TOOL_NAMES", "get_tool", "tool_specs"]

_S = {"type": "string"}
_I = {"type": "integer"}
_B = {"type": "boolean", "description": "also files that .gitignore ignores"}

_TOOLS = (
    Tool(
        "read_file",
        f"Read a text file (workspace or a loaded skill's directory). Reports the total line"
        f" count; at most {MAX_READ_LINES} lines or 256 KB per call, use offset/limit for more."
        f" Long lines show {LINE_CHARS} characters; column reads further along them.",
        schema(
            {
                "path": {**_S, "description": "file path relative to the workspace"},
                "offset": {**_I, "description": "first line to show, 1-based"},
                "limit": {**_I, "description": "number of lines to show"},
                "column": {**_I, "description": "first character of each line, 1-based"},
            },
            ["path"],
        ),
        read_file,
    ),
    Tool(
        "list_dir",
        "List a directory as a tree (directories end with /).",
        schema({"path": _S, "depth": {**_I, "description": "levels to show, 1-5"}}, []),
        list_dir,
    ),
    Tool(
        "find_files",
        "Find files whose workspace-relative path matches a glob (*, ?, **). Files that"
        " .gitignore ignores are left out unless include_ignored is true.",
        schema(
            {"pattern": {**_S, "description": "e.g. **/*.py or src/*.js"}, "include_ignored": _B},
            ["pattern"],
        ),
        find_files,
    ),
    Tool(
        "search_text",
        "Search file contents with a regular expression; returns path:line:text (capped)."
        " Files that .gitignore ignores are skipped unless include_ignored is true.",
        schema(
            {
                "pattern": {**_S, "description": "Python regular expression"},
                "path": {**_S, "description": "optional glob limiting which files to search"},
                "include_ignored": _B,
            },
            ["pattern"],
        ),
        search_text,
    ),
    Tool(
        "write_file",
        "Create or replace a whole file. The old version is snapshotted so /undo can restore it.",
        schema({"path": _S, "content": _S}, ["path", "content"]),
        write_file,
    ),
    Tool(
        "edit_file",
        "Replace old_text with new_text in a file. old_text must match exactly once unless"
        " replace_all is true. The old version is snapshotted so /undo can restore it.",
        schema(
            {"path": _S, "old_text": _S, "new_text": _S, "replace_all": {"type": "boolean"}},
            ["path", "old_text", "new_text"],
        ),
        edit_file,
    ),
    Tool(
        "run_command",
        f"Run a shell command in the workspace (stdin closed, default timeout {DEFAULT_TIMEOUT}s,"
        f" max {MAX_TIMEOUT}s). Long output keeps its head and tail.",
        schema(
            {"command": _S, "timeout": {**_I, "description": "seconds"}},
            ["command"],
        ),
        run_command,
    ),
    Tool(
        "update_plan",
        "Show the user your plan as a list of steps, each pending, in_progress or completed.",
        schema(
            {
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"step": _S, "status": {"type": "string", "enum": STATUSES}},
                        "required": ["step", "status"],
                    },
                }
            },
            ["steps"],
        ),
        update_plan,
    ),
)

REGISTRY: Mapping[str, Tool] = MappingProxyType({t.name: t for t in _TOOLS})
TOOL_NAMES = tuple(REGISTRY)


def get_tool(name: str) -> Tool:
    """Look a tool up; the error lists the choices."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ToolError(f"unknown tool {name!r} (available: {', '.join(TOOL_NAMES)})") from None


def tool_specs() -> tuple[ToolSpec, ...]:
    """The registry as the model sees it."""
    return tuple(ToolSpec(t.name, t.description, t.parameters) for t in _TOOLS)
