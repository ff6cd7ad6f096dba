"""The approval modes: what runs without asking. Pure data: the settings check a mode against
them, the tools' Approvals holds the one in force, /mode lists them."""

from __future__ import annotations

__all__ = ["DEFAULT_MODE", "MODES"]

MODES = {
    "ask": "every edit and every command asks first (the diff before the question)",
    "auto-edit": "edits apply (shown as diffs); commands run in the sandbox, or ask without one",
    "read-only": "edits refused; commands run in a read-only sandbox (they write nothing, no"
    " network), and are refused where there is no sandbox",
    "yolo": "edits and commands run without asking (protected paths still ask)",
}
DEFAULT_MODE = "auto-edit"
