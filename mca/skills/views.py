"""Text and JSON views of discovery and of the stage's decisions. Pure functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mca.fs.careful import is_dir
from mca.skills.catalog import published_lines
from mca.skills.discover import Discovery
from mca.skills.model import Candidate
from mca.skills.stage import StageResult
from mca.skills.writers import writers

__all__ = ["candidate_json", "candidates_text", "discovery_text", "list_json", "stage_text"]


def candidate_json(c: Candidate) -> dict[str, Any]:
    """The stable JSON shape for one SKILL.md (graders read it)."""
    description = c.skill.description if c.skill else c.fields.get("description")
    return {
        "path": str(c.path.absolute()),
        "name": c.name,
        "description": description if isinstance(description, str) else None,
        "status": c.status,
        "scope": c.root.scope if c.root else None,
        "rank": c.root.rank if c.root else None,
        "fields": c.fields,
        "diagnostics": [d.to_json() for d in c.diagnostics],
    }


def list_json(d: Discovery, count: Callable[[str], int], tokenizer: str) -> dict[str, Any]:
    """`mca skills list --json`: every candidate with what its catalog line costs every turn
    (characters and tokens of the line alone; null when it is not in the catalog), and the
    catalog's whole cost against its budget."""
    lines = published_lines(d.catalog, list(d.skills.values()))
    rows = []
    for c in d.candidates:
        row = candidate_json(c)
        line = lines.get(c.name) if c.skill is not None and c.status == "loaded" else None
        row["catalog"] = (
            None
            if line is None
            else {"chars": len(line), "tokens": count(line), "tokenizer": tokenizer}
        )
        rows.append(row)
    text, b = d.catalog.text, d.budget
    chars, tokens = len(text), count(text)
    catalog = {
        "chars": chars,
        "tokens": tokens,
        "tokenizer": tokenizer,
        "skills": len(d.catalog.entries),
        "budget": {"limit": b.limit, "unit": b.unit, "reason": b.reason},
        "used": tokens if b.unit == "tokens" else chars,
    }
    return {"skills": rows, "catalog": catalog}


def candidates_text(cands: Sequence[Candidate]) -> str:
    """A table of candidates with their diagnostics underneath."""
    if not cands:
        return "no SKILL.md found"
    out = []
    for c in cands:
        scope = f"{c.root.scope}:{c.root.rank}" if c.root else "-"
        out.append(f"{c.status:<9} {scope:<13} {c.name:<28} {c.path}")
        for d in c.diagnostics:
            line = f":{d.line}" if d.line else ""
            out.append(f"          {d.level}{line} [{d.code}] {d.message}")
    return "\n".join(out)


def discovery_text(d: Discovery) -> str:
    """`mca skills list` / `/skills`."""
    roots = "\n".join(
        f"  {r.rank:>4} {r.scope:<9} {r.path}{'' if is_dir(r.path) else '  (absent)'}"
        f"\n{'':16}who can write: {writers(r.path, r.scope)}"
        for r in d.roots
    )
    walk = "\n".join(f"  {x}" for x in d.diagnostics if x.code == "scan-truncated")
    budget = f"catalog budget: {d.budget.limit:,} {d.budget.unit} ({d.budget.reason})"
    return (
        f"roots, highest rank first:\n{roots}\n"
        + (f"walk problems:\n{walk}\n" if walk else "")
        + f"{budget}\n\n"
        + candidates_text(d.candidates)
    )


def stage_text(r: StageResult, tokens: int, label: str) -> str:
    """`mca skills why` / `/why`: hits, decisions, injected size."""
    out = []
    if r.paths:
        out.append("paths considered: " + ", ".join(f"{p} ({src})" for p, src in r.paths))
    out.append("hits:" if r.hits else "hits: none (no skill matched this sentence)")
    out += [f"  {h.line()}" for h in r.hits]
    if r.decisions:
        out.append("decisions:")
        for dec in r.decisions:
            mark = "loaded " if dec.loaded else "skipped"
            out.append(f"  {mark} {dec.name}: {dec.reason}")
            if dec.loaded and dec.block is not None:
                out += [f"          stage three: {cmd}" for cmd in dec.block.attachments]
    out.append(f"stage two injects {len(r.injected_text):,} chars, {tokens:,} tokens ({label})")
    if r.references:
        out.append("references: " + ", ".join(f"@{p}" for p, _ in r.references))
    return "\n".join(out)
