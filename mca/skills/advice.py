"""What `mca skills check` adds to loading: advice to an author, never a reason to skip."""

from __future__ import annotations

from mca.skills.lexicon import stop_words
from mca.skills.model import Diagnostic, Skill

__all__ = ["BODY_LINES_MAX", "advice", "body_lines"]

# The Agent Skills specification recommends keeping SKILL.md under 500 lines: past that, move
# detail into references/ that the model reads when it needs them.
BODY_LINES_MAX = 500


def body_lines(body: str) -> int:
    """Lines in a body, a last line without a newline counted."""
    return body.count("\n") + (1 if body and not body.endswith("\n") else 0)


def advice(skill: Skill) -> list[Diagnostic]:
    """Warnings for an author: a body over the spec's 500 lines, a trigger that is a stop word
    (a trigger `the` matches nearly every sentence, so the skill loads on every turn)."""
    out: list[Diagnostic] = []
    path = str(skill.path)
    if (n := body_lines(skill.body)) > BODY_LINES_MAX:
        message = (
            f"the body is {n} lines (the spec recommends under {BODY_LINES_MAX}); move detail"
            " into references/ files the body points to"
        )
        out.append(Diagnostic("body-too-long", path, message))
    stops = stop_words()
    for trigger in skill.triggers:
        if trigger.strip().lower() in stops:
            message = (
                f"trigger {trigger.strip()!r} is a stop word: it matches nearly every sentence,"
                " so the skill would load on every turn; use a word only this task uses"
            )
            out.append(Diagnostic("trigger-stop-word", path, message))
    return out
