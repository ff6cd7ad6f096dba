"""Stage one end to end: roots -> scan -> validate -> collisions -> catalog, with every finding."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mca.skills.cache import ParseCache
from mca.skills.catalog import Budget, Catalog, build_catalog
from mca.skills.model import Candidate, Diagnostic, Root, Skill
from mca.skills.policy import PRODUCTION, Policy
from mca.skills.scan import (
    Stamp,
    discover_roots,
    gc_paused,
    resolve_collisions,
    scan_roots,
    stamp,
)
from mca.skills.trigger import DocSource, SkillSet

__all__ = [
    "Discovery",
    "Fits",
    "changes",
    "char_fits",
    "discover",
    "session_roots",
    "shadow_warnings",
    "summary_line",
]

Fits = Callable[[str, int], bool]


def char_fits(text: str, limit: int) -> bool:
    """A character budget."""
    return len(text) <= limit


@dataclass
class Discovery:
    """Everything discovery found: the skills it loaded and why others were not."""

    roots: list[Root]
    candidates: list[Candidate]
    diagnostics: list[Diagnostic]  # walk problems, collisions and catalog cuts
    catalog: Catalog
    budget: Budget
    skills: dict[str, Skill] = field(default_factory=dict)
    policy: Policy = PRODUCTION
    dirs: list[str] = field(default_factory=list)  # every directory the scan listed
    docs: DocSource | None = None  # the description index's documents (a cache, or afresh)

    seen: dict[str, Stamp | None] = field(default_factory=dict)  # stat keys from the walk

    def _watched(self) -> list[str]:
        paths = [str(r.path) for r in self.roots] + self.dirs
        return paths + [str(c.path) for c in self.candidates]

    def signature(self) -> tuple[object, ...]:
        """A cheap fingerprint of what is on disk now: a stat of every root, every directory
        discovery listed and every SKILL.md (no reading, no parsing)."""
        return tuple(_stamp(p) for p in self._watched())

    def signature_seen(self) -> tuple[object, ...]:
        """The fingerprint as the walk saw it, before reading any SKILL.md: what
        `signature` gave then (a stat for anything the walk did not look at)."""
        return tuple(self.seen[p] if p in self.seen else _stamp(p) for p in self._watched())

    @functools.cached_property
    def skill_set(self) -> SkillSet:
        """The loaded skills with their judgment index (built once)."""
        return SkillSet((self.skills[k] for k in sorted(self.skills)), self.docs)

    def count(self, status: str) -> int:
        return sum(c.status == status for c in self.candidates)

    def all_diagnostics(self) -> list[Diagnostic]:
        """Per-file diagnostics and the walk's own, without duplicates."""
        every = [*(d for c in self.candidates for d in c.diagnostics), *self.diagnostics]
        return list(dict.fromkeys(every))


def discover(
    roots: Sequence[Root],
    budget: Budget,
    fits: Fits,
    policy: Policy = PRODUCTION,
    cache: ParseCache | None = None,
    shown: Callable[[str], str] | None = None,
    docs: DocSource | None = None,
) -> Discovery:
    """Scan the roots and build the catalog. Skills omitted from the catalog stay loadable.

    `shown` gives each skill directory (a path's text) as the model is told it (display_path)."""
    with gc_paused():
        return _discover(roots, budget, fits, policy, cache, shown, docs)


def _discover(
    roots: Sequence[Root],
    budget: Budget,
    fits: Fits,
    policy: Policy,
    cache: ParseCache | None,
    shown: Callable[[str], str] | None,
    docs: DocSource | None,
) -> Discovery:
    scan = scan_roots(roots, policy=policy, cache=cache)
    if shown is not None:
        for c in scan.candidates:
            if c.skill is not None:
                c.skill = c.skill.shown_at(shown(os.path.dirname(c.skill.path)))
    diags = list(scan.diagnostics)
    diags += resolve_collisions(scan.candidates)
    loaded = {c.skill.name: c.skill for c in scan.candidates if c.status == "loaded" and c.skill}
    catalog = build_catalog(list(loaded.values()), budget, fits)
    omitted = {s.name for s in catalog.omitted}
    for c in scan.candidates:
        if c.skill is not None and c.skill.name in omitted and c.status == "loaded":
            c.status = "omitted"
    by_path = {str(c.path): c for c in scan.candidates}
    for d in catalog.diagnostics:
        if d.path in by_path:
            by_path[d.path].diagnostics.append(d)
    diags += catalog.diagnostics
    return Discovery(
        list(roots),
        scan.candidates,
        diags,
        catalog,
        budget,
        loaded,
        policy,
        scan.dirs,
        docs,
        scan.seen,
    )


def _stamp(path: str) -> Stamp | None:
    try:
        return stamp(os.stat(path))
    except OSError:
        return None


def changes(old: Discovery, new: Discovery) -> str:
    """'added x; removed y; edited z' between two discoveries ('' when the skills are the same)."""
    before, after = old.skills, new.skills
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    edited = sorted(n for n in set(before) & set(after) if before[n] != after[n])
    parts = [
        f"{what} {', '.join(names)}"
        for what, names in (("added", added), ("removed", removed), ("edited", edited))
        if names
    ]
    return "; ".join(parts)


def session_roots(
    workspace: Path, home: Path, user_home: Path, explicit: Iterable[Path]
) -> list[Root]:
    """The roots a session searches (explicit, project, user)."""
    return discover_roots(workspace, home, user_home, explicit)


def summary_line(d: Discovery, tokens: int | None, label: str) -> str:
    """The one startup line."""
    size = f"catalog {len(d.catalog.text):,} chars"
    if tokens is not None:
        size += f", {tokens:,} tokens ({label})"
    cut = ""
    if d.catalog.shortened or d.catalog.descriptions_dropped or d.catalog.omitted:
        cut = f" · catalog over budget: {len(d.catalog.diagnostics)} cuts (see /skills)"
    return (
        f"skills: {d.count('loaded')} loaded, {d.count('skipped')} skipped,"
        f" {d.count('shadowed')} shadowed"
        + (f", {d.count('withheld')} withheld" if d.count("withheld") else "")
        + (f", {d.count('omitted')} omitted" if d.count("omitted") else "")
        + f" · {size}{cut}"
    )


def shadow_warnings(d: Discovery) -> list[str]:
    """One line per workspace skill that shadows one of the person's own (user or explicit)."""
    out = []
    for c in d.candidates:
        if c.status != "shadowed" or c.skill is None or c.root is None:
            continue
        winner = d.skills.get(c.skill.name)
        if winner is not None and winner.scope == "project" and c.root.scope != "project":
            out.append(
                f"warning: the workspace skill {c.skill.name!r} ({winner.path}) shadows your"
                f" {c.root.scope} skill of the same name ({c.path}); the workspace's is used"
            )
    return out
