"""The lab's exercises: five first drafts that work on small data and break on real data.

This file is what `mca lab init DIR` gives a student as DIR/exercises.py, and what
MCA_LAB=starter runs. Each function is the "intuitive" version an exercise replaces; its
docstring is the contract the self-test holds it to, and the comments above it are the
exercise. Rewrite a function, run `mca selftest --lab exercises.py`, and watch its checks turn
green. A function you delete keeps this starter version.

You may import mca's data types (Skill, Candidate, Diagnostic, Block, Hit, Reason, Decision)
and neutral helpers (list_resources); the production answers live elsewhere in mca, and the
point is to write them yourself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from mca.skills.gates import Decision
from mca.skills.inject import Block, list_resources
from mca.skills.model import Candidate, Hit, Reason, Root, Skill
from mca.skills.parse import FrontmatterError, ParsedSkill
from mca.skills.trigger import KEYWORD_POINTS

MAX_SCRIPT_BYTES = 1024 * 1024


# Exercise 1 (check 1). The header and the body are split on "---". A horizontal rule is legal
# Markdown, so any long body has one, and splitting on the delimiter cuts the body there.
# Scan by line instead: the first line must be exactly ---, and the header ends at the first
# later line that is exactly --- on its own.
def split_frontmatter(text: str) -> tuple[str, str, int]:
    """(frontmatter, body, 1-based line where the body starts). Raise
    FrontmatterError("no-frontmatter", "the first line of the file must be ---", 1) when the
    file does not start with a fence, and FrontmatterError("unclosed-frontmatter", ...) when
    no later line closes it."""
    parts = text.split("---")
    if len(parts) < 3:
        raise FrontmatterError("no-frontmatter", "the first line of the file must be ---", 1)
    return parts[1], parts[2].strip() + "\n", 1


# Exercise 2 (check 3). Whatever the frontmatter holds is loaded. A pack with no description
# has no trigger surface and must be skipped, with an error naming the missing field
# (Diagnostic("missing-description", ...)); name rules, lengths and types are the other three
# validations of the exercise.
def validate_metadata(path: Path, parsed: ParsedSkill, root: Root | None) -> Candidate:
    """A Candidate for this SKILL.md: `skill` set and status "loaded" when it may load; else
    skill None, status "skipped" and an error-level Diagnostic saying why."""
    cand = Candidate(path, root, fields=parsed.fields, diagnostics=list(parsed.diagnostics))
    if cand.has_error:
        return cand
    f = parsed.fields
    triggers, paths, priority = f.get("triggers"), f.get("paths"), str(f.get("priority", ""))
    cand.skill = Skill(
        name=str(f.get("name") or path.parent.name),
        description=str(f.get("description") or ""),
        path=path,
        body=parsed.body,
        fields=f,
        scope=root.scope if root else "",
        rank=root.rank if root else 0,
        domain=str(f.get("domain") or ""),
        priority=int(priority) if re.fullmatch(r"-?[0-9]{1,9}", priority) else 0,
        triggers=tuple(str(t) for t in triggers) if isinstance(triggers, list) else (),
        paths=tuple(str(p) for p in paths) if isinstance(paths, list) else (),
    )
    cand.status = "loaded"
    return cand


# Exercise 3 (check 6). Each script's source is pasted into the context next to its command,
# "so the model knows what it does". A script is there to be run, not read: three hundred lines
# in the context invite the model to write its own version. Offer one command line and one
# sentence, and read not a byte of the script.
def render_skill(skill: Skill) -> Block:
    """The tagged block for one skill: Block(name, full text, body, attachments), where
    attachments are the command lines offered for its scripts/ (run from the workspace)."""
    scripts = list_resources(skill.dir).get("scripts", [])
    commands = [f"node {skill.dir_label}/{rel}" for rel in scripts]
    sources = [f"<script path={rel!r}>\n{_source(skill.dir / rel)}\n</script>" for rel in scripts]
    parts = [f'<skill name="{skill.name}" dir="{skill.dir_label}">', skill.body.strip()]
    if commands:
        parts.append("<scripts>\nRun a script with run_command:\n" + "\n".join(commands))
        parts += [*sources, "</scripts>"]
    parts.append("</skill>")
    return Block(skill.name, "\n".join(parts), skill.body.strip(), commands)


def _source(path: Path) -> str:
    try:
        with path.open("rb") as f:
            return f.read(MAX_SCRIPT_BYTES).decode("utf-8", errors="replace")
    except OSError as e:
        return f"[not read: {e.strerror or e}]"


# Exercise 4 (checks 7 and 8). Keywords are matched as substrings, so a trigger "test" fires on
# "latest" and "contest", and the `paths` a skill declares are never looked at. Match ASCII
# triggers on word boundaries (substrings only for scripts written without spaces), and score
# every path of the sentence that a skill's `paths` glob matches (10 points each).
def judge_triggers(
    skills: Iterable[Skill], sentence: str, paths: Sequence[tuple[str, str]]
) -> list[Hit]:
    """The skills this sentence matches, best first: Hit(skill, [Reason(kind, detail, points)])
    with kinds "mention" (100), "path" (10, detail the path) and "keyword" (3, detail the
    trigger in quotes). `paths` holds (path, where it came from) pairs."""
    hits = []
    low = sentence.lower()
    for skill in skills:
        reasons = [
            Reason("keyword", f'"{t}"', KEYWORD_POINTS) for t in skill.triggers if t.lower() in low
        ]
        if reasons:
            hits.append(Hit(skill, reasons))
    hits.sort(key=lambda h: (-h.score, h.skill.name))
    return hits


# Exercise 5 (checks 9 and 10). Every match is loaded. Two contradictory conventions on the table
# only make the model pick one at random, so load one skill per domain (the highest score), and
# keep a total character budget, saying why anything was left out.
def apply_gates(
    hits: Sequence[Hit],
    budget: int,
    render: Callable[[Skill], Block],
    in_context: Mapping[str, int],
    held: Mapping[str, str] | None = None,
) -> list[Decision]:
    """A Decision(hit, loaded, reason, block) per hit, in order. Reasons the self-test reads:
    "same DOMAIN domain as WINNER, which won" and "body is N chars, only M left"."""
    return [Decision(h, True, "loaded (no gates)", render(h.skill)) for h in hits]
