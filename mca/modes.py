"""The approval modes: what runs without asking. Pure data: the settings check a mode against
them, the tools' Approvals holds the one in force, /mode lists them."""

from __future__ import annotations

__all__ = ["CYCLE", "DEFAULT_MODE", "MODES", "next_mode"]

MODES = {
    "ask": "every edit and every command asks first (the diff before the question)",
    "auto-edit": "edits apply (shown as diffs); commands run in the sandbox, or ask without one",
    "read-only": "edits refused; commands run in a read-only sandbox (they write nothing, no"
    " network), and are refused where there is no sandbox",
    "yolo": "edits and commands run without asking (protected paths still ask)",
}
DEFAULT_MODE = "auto-edit"

# Shift+Tab's order. yolo is not in it: one key never turns every question off (/mode yolo or
# --mode yolo does, by name); from yolo, Shift+Tab goes back to asking.
CYCLE = ("auto-edit", "read-only", "ask")


def next_mode(mode: str) -> str:
    """The mode Shift+Tab goes to from `mode`."""
    if mode not in CYCLE:
        return "ask"
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]
