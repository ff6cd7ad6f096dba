"""The lab's typed protocol: the five exercise functions' arguments and answers as plain data.

A student's functions run in a child process (mca/lab/serve.py); the checks and their verdicts
stay in the grader. What crosses the pipe is JSON: strings, numbers, lists and objects, never
pickles and never code. Each side rebuilds mca's dataclasses from that data, and the grader's
side validates every field first, so an answer that is not what the contract says is a failed
check with a reason, whatever the child sent. One Codec per exercise (keyed by its Policy field).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mca.skills.inject import Block
from mca.skills.model import CODES, Candidate, Diagnostic, Hit, Reason, Root, Skill
from mca.skills.parse import ParsedSkill
from mca.skills.yaml import Value

MAX_DEPTH = 32  # nesting of a YAML value in a skill's fields


class WireError(ValueError):
    """Data that is not what the contract says (the message says what is wrong)."""


# -- checked reads -----------------------------------------------------------------------------
def as_obj(d: Any, what: str) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise WireError(f"{what} is not an object")
    return d


def _field(d: Mapping[str, Any], key: str, kind: type, what: str) -> Any:
    v = d.get(key)
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):  # JSON's true is no 1
        raise WireError(f"{key!r} is not {what}")
    return v


def as_str(d: Mapping[str, Any], key: str) -> str:
    return str(_field(d, key, str, "a string"))


def as_int(d: Mapping[str, Any], key: str) -> int:
    return int(_field(d, key, int, "an integer"))


def as_bool(d: Mapping[str, Any], key: str) -> bool:
    return bool(_field(d, key, bool, "true or false"))


def as_strs(v: Any, what: str) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise WireError(f"{what} is not a list of strings")
    return list(v)


def as_list(v: Any, what: str) -> list[Any]:
    if not isinstance(v, list):
        raise WireError(f"{what} is not a list")
    return v


def _value(v: Any, depth: int = 0) -> Value:
    """A YAML value as mca reads one: a string, a list of values, or a map of them."""
    if depth > MAX_DEPTH:
        raise WireError("a field value is nested too deeply")
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return [_value(x, depth + 1) for x in v]
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {k: _value(x, depth + 1) for k, x in v.items()}
    raise WireError("a field value is not a string, a list or a map")


def _fields(v: Any) -> dict[str, Value]:
    value = _value(as_obj(v, "fields"))
    assert isinstance(value, dict)
    return value


# -- records -----------------------------------------------------------------------------------
def skill_out(s: Skill) -> dict[str, Any]:
    return {
        "name": s.name,
        "description": s.description,
        "path": str(s.path),
        "body": s.body,
        "fields": s.fields,
        "scope": s.scope,
        "rank": s.rank,
        "domain": s.domain,
        "priority": s.priority,
        "triggers": list(s.triggers),
        "paths": list(s.paths),
        "shown_dir": s.shown_dir,
    }


def skill_in(data: Any) -> Skill:
    d = as_obj(data, "a skill")
    return Skill(
        name=as_str(d, "name"),
        description=as_str(d, "description"),
        path=Path(as_str(d, "path")),
        body=as_str(d, "body"),
        fields=_fields(d.get("fields")),
        scope=as_str(d, "scope"),
        rank=as_int(d, "rank"),
        domain=as_str(d, "domain"),
        priority=as_int(d, "priority"),
        triggers=tuple(as_strs(d.get("triggers"), "triggers")),
        paths=tuple(as_strs(d.get("paths"), "paths")),
        shown_dir=as_str(d, "shown_dir"),
    )


def root_out(r: Root | None) -> dict[str, Any] | None:
    return None if r is None else {"path": str(r.path), "scope": r.scope, "rank": r.rank}


def root_in(data: Any) -> Root | None:
    if data is None:
        return None
    d = as_obj(data, "a root")
    return Root(Path(as_str(d, "path")), as_str(d, "scope"), as_int(d, "rank"))


def diag_out(x: Diagnostic) -> dict[str, Any]:
    return {"code": x.code, "path": x.path, "message": x.message, "line": x.line}


def diag_in(data: Any) -> Diagnostic:
    d = as_obj(data, "a diagnostic")
    code = as_str(d, "code")
    if code not in CODES:
        raise WireError(f"diagnostic code {code[:40]!r} is not one mca knows")
    line = d.get("line")
    if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
        raise WireError("a diagnostic's line is not an integer")
    return Diagnostic(code, as_str(d, "path"), as_str(d, "message"), line)


def block_out(b: Block) -> dict[str, Any]:
    return {"name": b.name, "text": b.text, "body": b.body, "attachments": list(b.attachments)}


def block_in(data: Any) -> Block:
    d = as_obj(data, "a block")
    attachments = as_strs(d.get("attachments"), "attachments")
    return Block(as_str(d, "name"), as_str(d, "text"), as_str(d, "body"), attachments)


def _reasons_out(h: Hit) -> list[list[Any]]:
    return [[r.kind, r.detail, r.points] for r in h.reasons]


def _reasons_in(data: Any) -> list[Reason]:
    out = []
    for r in as_list(data, "reasons"):
        if not (isinstance(r, list) and len(r) == 3):
            raise WireError("a reason is not [kind, detail, points]")
        kind, detail, points = r
        if not isinstance(kind, str) or not isinstance(detail, str):
            raise WireError("a reason's kind or detail is not a string")
        if not isinstance(points, int) or isinstance(points, bool):
            raise WireError("a reason's points are not an integer")
        out.append(Reason(kind, detail, points))
    return out


def _index(item: Any, pool: Sequence[Any]) -> int | None:
    """Where `item` is in `pool`: the same object first, else an equal one."""
    for i, x in enumerate(pool):
        if x is item:
            return i
    for i, x in enumerate(pool):
        if x == item:
            return i
    return None


def pick(ref: Any, pool: Sequence[Any], rebuild: Callable[[Any], Any], what: str) -> Any:
    """One of the given items by its index, or one the answer built itself."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        if not 0 <= ref < len(pool):
            raise WireError(f"{what} {ref} is not one of the {len(pool)} given")
        return pool[ref]
    return rebuild(ref)


def parsed_out(p: ParsedSkill) -> dict[str, Any]:
    return {
        "fields": p.fields,
        "body": p.body,
        "diagnostics": [diag_out(x) for x in p.diagnostics],
        "key_lines": p.key_lines,
    }


def parsed_in(data: Any) -> ParsedSkill:
    d = as_obj(data, "a parsed skill")
    lines = as_obj(d.get("key_lines"), "key_lines")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in lines.values()):
        raise WireError("key_lines are not integers")
    diags = [diag_in(x) for x in as_list(d.get("diagnostics"), "diagnostics")]
    return ParsedSkill(_fields(d.get("fields")), as_str(d, "body"), diags, dict(lines))


def candidate_out(c: Candidate) -> dict[str, Any]:
    return {
        "path": str(c.path),
        "root": root_out(c.root),
        "skill": None if c.skill is None else skill_out(c.skill),
        "fields": c.fields,
        "diagnostics": [diag_out(x) for x in c.diagnostics],
        "status": c.status,
    }


def candidate_in(data: Any) -> Candidate:
    d = as_obj(data, "a candidate")
    skill = d.get("skill")
    return Candidate(
        Path(as_str(d, "path")),
        root_in(d.get("root")),
        None if skill is None else skill_in(skill),
        _fields(d.get("fields")),
        [diag_in(x) for x in as_list(d.get("diagnostics"), "diagnostics")],
        as_str(d, "status"),
    )


def hit_out(h: Hit, skills: Sequence[Skill] = ()) -> dict[str, Any]:
    i = _index(h.skill, skills)
    return {"skill": skill_out(h.skill) if i is None else i, "reasons": _reasons_out(h)}


def hit_in(data: Any, skills: Sequence[Skill] = ()) -> Hit:
    d = as_obj(data, "a hit")
    return Hit(pick(d.get("skill"), skills, skill_in, "skill"), _reasons_in(d.get("reasons")))
