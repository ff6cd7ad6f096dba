"""Path containment: every path a tool touches must resolve inside an allowed root."""

from __future__ import annotations

import os
from pathlib import Path

from mca.errors import PathRefused

__all__ = ["MAX_PATH_CHARS", "inside", "relative_label", "resolve_in", "resolve_in_skill"]

MAX_PATH_CHARS = 4096


def _check_text(path: str) -> None:
    if not path:
        raise PathRefused("empty path")
    if "\x00" in path:
        raise PathRefused("path contains a NUL byte")
    if len(path) > MAX_PATH_CHARS:
        raise PathRefused(f"path is {len(path)} characters long (limit {MAX_PATH_CHARS})")


def _resolve(base: Path, path: str) -> Path:
    try:
        return (base / path).resolve()
    except (OSError, RuntimeError) as e:  # symlink loops, names too long
        raise PathRefused(f"{path}: cannot be resolved ({e.__class__.__name__}: {e})") from None


def inside(path: Path, root: Path) -> bool:
    """True when the resolved path is root or below it."""
    return path == root or path.is_relative_to(root)


def resolve_in(root: Path, path: str) -> Path:
    """Resolve `path` against `root`, refusing anything (.., absolute, symlink) that leaves it."""
    _check_text(path)
    real_root = root.resolve()
    target = _resolve(real_root, path)
    if not inside(target, real_root):
        raise PathRefused(
            f"{path}: refused, it resolves to {target}, outside the workspace {real_root}"
        )
    return target


def resolve_in_skill(skill_dir: Path, path: str) -> Path:
    """Resolve a skill resource inside its skill's own resolved directory."""
    _check_text(path)
    real = skill_dir.resolve()
    target = _resolve(real, path)
    if not inside(target, real):
        raise PathRefused(f"{path}: refused, it resolves outside the skill directory {real}")
    return target


def relative_label(path: Path, root: Path) -> str:
    """A short label for a path: relative to root when inside it."""
    try:
        return os.path.relpath(path, root) if inside(path, root) else str(path)
    except ValueError:
        return str(path)
