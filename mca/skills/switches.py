"""The switches other clients' SKILL.md files carry (Claude Code's, in practice), what mca does
with each, and the one rule they share: a wish the user states by name beats a match."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mca.skills.model import Hit, Skill
from mca.skills.yaml import Value

__all__ = [
    "BOOLEAN_SWITCHES",
    "FALSE",
    "NAMED_ONLY",
    "SWITCHES",
    "TRUE",
    "argument_hint",
    "flag",
    "model_invocable",
    "named",
    "switch_problems",
    "user_invocable",
    "withhold",
]

# mca's YAML subset reads scalars as text; these are YAML 1.2's booleans.
TRUE = ("true", "True", "TRUE")
FALSE = ("false", "False", "FALSE")
BOOLEAN_SWITCHES = ("disable-model-invocation", "user-invocable")

# Every client switch found in the 455 SKILL.md files of ../shared/corpus/skills (frontmatter
# keys, counted by tests/skills/test_wishes.py), and what mca does with it.
SWITCHES: dict[str, tuple[int, str]] = {
    "disable-model-invocation": (
        24,
        "honoured: true means no match (trigger, path, file, description) loads it; it loads"
        " when the user names it ($NAME or /NAME); the catalog marks it; read_file skill:NAME"
        " still works",
    ),
    "user-invocable": (
        5,
        "honoured: false leaves it out of /help and completion, and /NAME at the REPL says why;"
        " the model may still read it",
    ),
    "argument-hint": (4, "honoured: /help shows it after /NAME"),
    "allowed-tools": (
        34,
        "not honoured, on purpose: a file a repository ships never widens what runs without"
        " asking; the approval mode decides",
    ),
    "hooks": (
        4,
        "not honoured, on purpose: a skill's hooks would run commands nobody approved;"
        " kept as is, with an info diagnostic",
    ),
}
NAMED_ONLY = "disable-model-invocation: loads only when you name it (${name} or /{name})"


def flag(fields: Mapping[str, Value], key: str, default: bool) -> bool:
    """A boolean switch; a value that is not one leaves the default (validation warns)."""
    value = fields.get(key)
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    return default


def model_invocable(skill: Skill) -> bool:
    """False for `disable-model-invocation: true`: only the user's naming loads it."""
    return not flag(skill.fields, "disable-model-invocation", False)


def user_invocable(skill: Skill) -> bool:
    """False for `user-invocable: false`: not offered as /NAME."""
    return flag(skill.fields, "user-invocable", True)


def _hint(value: Value) -> str | None:
    # `argument-hint: [file path]` is a YAML list; Claude Code shows it with its brackets.
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(" ".join(str(v).split()) for v in value) + "]"
    return None


def argument_hint(skill: Skill) -> str:
    """What /help shows after /NAME ('' when the skill gives no usable hint)."""
    value = skill.fields.get("argument-hint")
    return (_hint(value) or "") if value is not None else ""


def switch_problems(fields: Mapping[str, Value]) -> list[tuple[str, str, str]]:
    """(code, key, message) for each client switch that is not as mca can use it."""
    out = []
    for key in BOOLEAN_SWITCHES:
        value = fields.get(key)
        if value is not None and value not in TRUE + FALSE:
            shown = value if isinstance(value, str) else type(value).__name__
            message = f"field {key!r} must be true or false, got {shown!r}; the field is ignored"
            out.append(("field-dropped", key, message))
    hint = fields.get("argument-hint")
    if hint is not None and _hint(hint) is None:
        message = "field 'argument-hint' must be text (or [text] as Claude Code writes it)"
        out.append(("field-dropped", "argument-hint", message))
    if "hooks" in fields:
        out.append(("unknown-field", "hooks", f"field 'hooks': {SWITCHES['hooks'][1]}"))
    return out


def named(hit: Hit) -> str:
    """How the user named this skill explicitly ($name or /name), or ''."""
    for r in hit.reasons:
        if r.kind == "mention" and r.detail[:1] in ("$", "/"):
            return r.detail
    return ""


def withhold(hits: Sequence[Hit]) -> tuple[list[Hit], list[tuple[Hit, str]]]:
    """Hits the gates may load, and hits a skill's own switch keeps out (with the reason)."""
    kept: list[Hit] = []
    out: list[tuple[Hit, str]] = []
    for hit in hits:
        if model_invocable(hit.skill) or named(hit):
            kept.append(hit)
        else:
            out.append((hit, NAMED_ONLY.format(name=hit.skill.name)))
    return kept, out
