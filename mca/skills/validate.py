"""Validation: every issue is collected; errors skip a skill, warnings load it."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from mca.skills.inject import unrunnable_scripts
from mca.skills.model import (
    COMPATIBILITY_MAX,
    DESCRIPTION_MAX,
    NAME_MAX,
    Candidate,
    Diagnostic,
    Root,
    Skill,
)
from mca.skills.parse import ParsedSkill
from mca.skills.switches import SWITCHES, switch_problems
from mca.skills.yaml import Value

SPEC_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
EXTENSION_FIELDS = ("domain", "priority", "triggers", "paths")
INTEGER = re.compile(r"[+-]?[0-9]{1,9}\Z")


_STEPS = re.compile(r"[/\\]")
ASCII_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")


def name_problem(name: str) -> str:
    """Why a name breaks the Agent Skills naming rules, or ''."""
    if ASCII_NAME.match(name):
        return ""
    norm = unicodedata.normalize("NFKC", name)
    if not norm:
        return "the name is empty"
    bad = sorted({c for c in norm if not (c == "-" or (c.isalnum() and c == c.lower()))})
    if bad:
        shown = "".join(bad[:10])
        return f"use lowercase letters, digits and hyphens only (found {shown!r})"
    if norm.startswith("-") or norm.endswith("-") or "--" in norm:
        return "no leading, trailing or double hyphens"
    return ""


class _Checker:
    def __init__(self, path: Path, parsed: ParsedSkill) -> None:
        self.path = str(path)
        self.parsed = parsed
        self.diags: list[Diagnostic] = list(parsed.diagnostics)
        self.dropped_keys: set[str] = set()

    def add(self, code: str, message: str, key: str | None = None) -> None:
        line = self.parsed.key_lines.get(key) if key else None
        self.diags.append(Diagnostic(code, self.path, message, line))

    def invalid(self, key: str, expected: str, got: Value) -> None:
        shown = got if isinstance(got, str) else type(got).__name__
        self.add("invalid-field", f"field {key!r} must be {expected}, got {shown!r}", key)

    def dropped(self, key: str, expected: str, got: Value) -> None:
        shown = got if isinstance(got, str) else type(got).__name__
        message = f"field {key!r} must be {expected}, got {shown!r}; the field is ignored"
        self.add("field-dropped", message, key)
        self.dropped_keys.add(key)

    def string(self, key: str, drop: bool = False) -> str | None:
        value = self.parsed.fields.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            (self.dropped if drop else self.invalid)(key, "a string", value)
            return None
        return value

    def string_list(self, key: str, what: str) -> tuple[str, ...]:
        """An extension list field (dropped with a warning when it is not one)."""
        value = self.parsed.fields.get(key)
        if value is None or value == "":
            return ()
        out = [v.strip() for v in value if isinstance(v, str)] if isinstance(value, list) else None
        if out is None or len(out) != len(value) or not all(out):  # one pass over the items
            self.dropped(key, f"a list of {what}", value)
            return ()
        return tuple(out)


def _name(c: _Checker, dirname: str) -> str:
    name = c.string("name", drop=True)
    if name is None or not name.strip():
        if "name" not in c.parsed.fields or name is not None:
            c.add("name-defaulted", f"no 'name' field; using the directory name {dirname!r}")
        return dirname
    name = name.strip()
    norm = unicodedata.normalize("NFKC", name)
    if len(norm) > NAME_MAX:
        c.add("name-too-long", f"name is {len(norm)} characters (limit {NAME_MAX})", "name")
    if problem := name_problem(name):
        c.add("name-invalid", f"name {name!r}: {problem}", "name")
    if norm != unicodedata.normalize("NFKC", dirname):
        c.add(
            "name-mismatch",
            f"name {name!r} differs from its directory {dirname!r}; rename one of them",
            "name",
        )
    return name


def _description(c: _Checker) -> str:
    description = c.string("description")
    if "description" in c.parsed.fields and description is None:
        return ""  # wrong type, already reported
    if description is None or not description.strip():
        c.add(
            "missing-description",
            "missing or empty 'description', a required field: it cannot be omitted because it"
            " is the only text the model sees to decide when to use the skill, so the skill is"
            " skipped. Add a 'Use when ...' description",
            "description",
        )
        return ""
    description = description.strip()
    if len(description) > DESCRIPTION_MAX:
        c.add(
            "description-too-long",
            f"description is {len(description)} characters (limit {DESCRIPTION_MAX})",
            "description",
        )
    return description


def _spec_fields(c: _Checker) -> None:
    """The optional spec fields: a wrong-typed one is dropped with a warning, never the skill
    (the seed loads what it can and says what it left out)."""
    compat = c.string("compatibility", drop=True)
    if compat is not None and len(compat) > COMPATIBILITY_MAX:
        c.add(
            "compatibility-too-long",
            f"compatibility is {len(compat)} characters (limit {COMPATIBILITY_MAX})",
            "compatibility",
        )
    c.string("license", drop=True)
    metadata = c.parsed.fields.get("metadata")
    if metadata not in (None, "") and not isinstance(metadata, dict):
        c.dropped("metadata", "a map of keys to values", metadata)
    tools = c.parsed.fields.get("allowed-tools")
    if tools is not None and not (
        isinstance(tools, str)
        or (isinstance(tools, list) and all(isinstance(t, str) for t in tools))
    ):
        c.dropped("allowed-tools", "a string or a list of strings", tools)
    for key in c.parsed.fields:
        if key not in SPEC_FIELDS and key not in EXTENSION_FIELDS and key not in SWITCHES:
            c.add("unknown-field", f"field {key!r} is not used by mca (kept as is)", key)
    for code, key, message in switch_problems(c.parsed.fields):
        c.add(code, message, key)


def _extensions(c: _Checker) -> tuple[str, int, tuple[str, ...], tuple[str, ...]]:
    """mca's own fields. A wrong one is dropped with a warning; the skill still loads (they are
    extensions: a client that does not know them would load the skill too)."""
    domain = c.string("domain", drop=True) or ""
    if domain and name_problem(domain):
        c.dropped("domain", "a name like a skill name (lowercase, digits, hyphens)", domain)
        domain = ""
    priority = 0
    raw = c.parsed.fields.get("priority")
    if raw not in (None, ""):
        if isinstance(raw, str) and INTEGER.match(raw.strip()):
            priority = int(raw)
        else:
            c.dropped("priority", "an integer", raw if raw is not None else "")
    triggers = c.string_list("triggers", "non-empty strings")
    paths = c.string_list("paths", "relative glob patterns")
    for pattern in paths:
        if pattern.startswith(("/", "~")) or (".." in pattern and ".." in _STEPS.split(pattern)):
            c.dropped("paths", "relative glob patterns without '..'", pattern)
            return domain, priority, triggers, ()
    return domain, priority, triggers, paths


def validate(path: Path, parsed: ParsedSkill, root: Root | None) -> Candidate:
    """Turn a parsed SKILL.md into a candidate: a Skill when no error was found."""
    cand = Candidate(path, root, fields=parsed.fields)
    if any(d.level == "error" for d in parsed.diagnostics):
        cand.diagnostics = list(parsed.diagnostics)
        return cand
    c = _Checker(path, parsed)
    skill_dir = os.path.dirname(path)  # its text: no Path made for each of thousands
    name = _name(c, os.path.basename(skill_dir))
    description = _description(c)
    _spec_fields(c)
    domain, priority, triggers, paths = _extensions(c)
    for rel in unrunnable_scripts(skill_dir):
        c.add(
            "script-not-runnable",
            f"{rel} has no known interpreter (by its extension) and no execute bit, so it is"
            " not offered as a command; add an extension mca knows or chmod +x it",
        )
    cand.diagnostics = c.diags
    if not cand.has_error:
        cand.skill = Skill(
            name=name,
            description=description,
            path=path,
            body=parsed.body,
            fields={k: v for k, v in parsed.fields.items() if k not in c.dropped_keys},
            scope=root.scope if root else "",
            rank=root.rank if root else 0,
            domain=domain,
            priority=priority,
            triggers=triggers,
            paths=paths,
        )
        cand.status = "loaded"
    return cand
