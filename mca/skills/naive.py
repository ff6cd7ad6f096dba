"""The lab's starter: five naive versions that work on small data and break on real data.

Selected only by mca.skills.select.select_policy (MCA_LAB=starter). Each is the "intuitive"
first draft that a lab exercise replaces; the self-test shows which checks each one breaks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from mca.fsutil import read_regular
from mca.skills.gates import Decision
from mca.skills.inject import Block, list_resources, render_skill
from mca.skills.model import Candidate, Root, Skill
from mca.skills.parse import MAX_SKILL_BYTES, FrontmatterError, ParsedSkill
from mca.skills.policy import PRODUCTION, Policy, RenderFn
from mca.skills.trigger import KEYWORD_POINTS, Hit, Reason
from mca.skills.validate import INTEGER


def naive_split(text: str) -> tuple[str, str, int]:
    """Trap 1: split on the delimiter (a --- rule in the body becomes a boundary)."""
    parts = text.split("---")
    if len(parts) < 3:
        raise FrontmatterError("no-frontmatter", "no frontmatter")
    return parts[1], parts[2].strip() + "\n", 1


def naive_validate(path: Path, parsed: ParsedSkill, root: Root | None) -> Candidate:
    """Trap 2: no metadata validation: whatever is there is loaded."""
    cand = Candidate(path, root, fields=parsed.fields, diagnostics=list(parsed.diagnostics))
    if cand.has_error:
        return cand
    f = parsed.fields
    triggers = f.get("triggers")
    paths = f.get("paths")
    cand.skill = Skill(
        name=str(f.get("name") or path.parent.name),
        description=str(f.get("description") or ""),
        path=path,
        body=parsed.body,
        fields=f,
        scope=root.scope if root else "",
        rank=root.rank if root else 0,
        domain=str(f.get("domain") or ""),
        priority=int(str(f["priority"])) if INTEGER.match(str(f.get("priority", ""))) else 0,
        triggers=tuple(str(t) for t in triggers) if isinstance(triggers, list) else (),
        paths=tuple(str(p) for p in paths) if isinstance(paths, list) else (),
    )
    cand.status = "loaded"
    return cand


def _source(path: Path) -> str:
    try:
        return read_regular(path, cap=MAX_SKILL_BYTES).decode("utf-8", errors="replace")
    except OSError as e:
        return f"[not read: {e.strerror or e}]"


def naive_render(skill: Skill) -> Block:
    """Trap 3: also paste each script's source into the context, "so the model knows it"."""
    block = render_skill(skill)
    scripts = list_resources(skill.dir).get("scripts", [])
    dumps = [f"<script path={rel!r}>\n{_source(skill.dir / rel)}\n</script>" for rel in scripts]
    if not dumps:
        return block
    head = block.text.removesuffix("</skill>")
    return replace(block, text=head + "\n".join(dumps) + "\n</skill>")


def naive_judge(
    skills: Iterable[Skill], sentence: str, paths: Sequence[tuple[str, str]]
) -> list[Hit]:
    """Trap 4: keyword substrings only: no paths, no word boundaries."""
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


def naive_gates(
    hits: Sequence[Hit],
    budget: int,
    render: RenderFn,
    in_context: Mapping[str, int],
    held: Mapping[str, str] | None = None,
) -> list[Decision]:
    """Trap 5: load every match; no domain gate, no budget gate."""
    return [Decision(h, True, "loaded (no gates)", render(h.skill)) for h in hits]


NAIVE = {
    "split": naive_split,
    "validate": naive_validate,
    "script": naive_render,
    "judge": naive_judge,
    "gates": naive_gates,
}
FIELD = {
    "split": "split",
    "validate": "validate",
    "script": "render",
    "judge": "judge",
    "gates": "gates",
}


def starter_policy(traps: Sequence[str]) -> Policy:
    """Production with the named traps swapped in."""
    swaps = {FIELD[t]: NAIVE[t] for t in traps}
    return replace(PRODUCTION, name="starter(" + ",".join(traps) + ")", **swaps)  # type: ignore[arg-type]
