"""Stage one: the catalog of skills in the system prompt, one entry per skill, within a budget."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mca.context.provenance import defang
from mca.skills.model import Diagnostic, Skill
from mca.skills.switches import model_invocable

__all__ = [
    "CATALOG_SHARE",
    "FALLBACK_CHARS",
    "MIN_DESCRIPTION",
    "NAMED_ONLY_MARK",
    "PREAMBLE",
    "PREAMBLE_RUNS",
    "Budget",
    "Catalog",
    "build_catalog",
    "published_lines",
    "render",
]

CATALOG_SHARE = 0.02  # of the context window, in estimated tokens, when the window is known
FALLBACK_CHARS = 8000  # when it is not
MIN_DESCRIPTION = 40  # shortening below this is worse than dropping descriptions

# At most three short lines; every turn pays for them. Locations are not listed: the model
# loads a skill by name (read_file skill:NAME), so no install path ever reaches the prompt.
PREAMBLE = (
    "## Skills\n"
    "mca adds a skill's full text when a request matches it; to load one yourself,"
    " read_file skill:NAME."
)


@dataclass(frozen=True)
class Budget:
    """A limit in 'tokens' (estimated) or 'chars'."""

    limit: int
    unit: str
    reason: str

    @staticmethod
    def for_window(window: int | None) -> Budget:
        if window:
            tokens = int(window * CATALOG_SHARE)
            return Budget(tokens, "tokens", f"2% of a {window:,}-token context window")
        return Budget(FALLBACK_CHARS, "chars", "context window unknown")


@dataclass
class Catalog:
    """The rendered catalog and what had to be cut to fit."""

    text: str
    entries: list[str] = field(default_factory=list)  # skill names published, in order
    shortened: dict[str, int] = field(default_factory=dict)  # name -> description chars kept
    descriptions_dropped: bool = False
    omitted: list[Skill] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


NAMED_ONLY_MARK = "(only when the user names it)"  # disable-model-invocation: true


@dataclass(frozen=True)
class _Line:
    """A skill's catalog line in parts, prepared once per build: every fitting attempt renders
    the catalog again, and thousands of skills make that the cost of start-up."""

    name: str  # defanged, on one line
    mark: str
    flat: str  # the description on one line

    @staticmethod
    def of(skill: Skill) -> _Line:
        mark = "" if model_invocable(skill) else NAMED_ONLY_MARK
        name = defang(" ".join(skill.name.split()))
        return _Line(name, mark, " ".join(skill.description.split()))

    def render(self, limit: int | None, drop: bool) -> str:
        description = None if drop else _shorten(self.flat, limit)
        text = " ".join(filter(None, (self.mark, defang(description) if description else "")))
        return f"- {self.name}: {text}" if text else f"- {self.name}"


def _shorten(flat: str, limit: int | None) -> str:
    if limit is None or len(flat) <= limit:
        return flat
    return flat[: max(limit - 1, 0)].rstrip() + "…"


def _join(entries: Sequence[str], omitted: int) -> str:
    if not entries:
        return ""
    note = (
        f"\n({omitted} more skills omitted to fit the catalog budget; `mca skills list` shows them)"
        if omitted
        else ""
    )
    return PREAMBLE + "\n" + "\n".join(entries) + note


def render(skills: Sequence[Skill], limit: int | None, drop: bool, omitted: int) -> str:
    """The catalog text, one line per skill; '' when there are no skills, or none fit."""
    return _join([_Line.of(s).render(limit, drop) for s in skills], omitted)


# A text holds at least as many tokens as runs of non-space characters (no piece the bundled
# encodings cut spans a space between two of them, and each piece is a token or more), and at
# least as many characters. A catalog with more runs than its budget never fits, so it is not
# even rendered (thousands of skills at start-up).
PREAMBLE_RUNS = len(PREAMBLE.split())


def _runs(line: _Line, described: bool) -> int:
    """The fewest runs the line can have: '-', the name, the mark, a word of description."""
    return 1 + len(line.name.split()) + len(line.mark.split()) + (described and bool(line.flat))


def build_catalog(
    skills: Sequence[Skill], budget: Budget, fits: Callable[[str, int], bool]
) -> Catalog:
    """Fit the catalog: full, then fairly shortened descriptions, then none, then fewer skills.

    Every step is a binary search over whole renders, so fitting n skills costs O(n log n):
    start-up with thousands of skills stays close to start-up with none.
    """
    ordered = sorted(skills, key=lambda s: s.name)
    lines = [_Line.of(s) for s in ordered]
    if PREAMBLE_RUNS + sum(_runs(line, True) for line in lines) > budget.limit:
        return _fewer(ordered, lines, budget, fits)

    def shortened(limit: int | None) -> str:
        return _join([line.render(limit, False) for line in lines], 0)

    full = shortened(None)
    if not ordered or fits(full, budget.limit):
        return Catalog(full, [s.name for s in ordered])
    longest = max(len(line.flat) for line in lines)
    best = None
    if fits(shortened(MIN_DESCRIPTION), budget.limit):
        lo, hi, best = MIN_DESCRIPTION + 1, longest, MIN_DESCRIPTION
        while lo <= hi:  # the largest per-description cap that fits, the same for every skill
            mid = (lo + hi) // 2
            if fits(shortened(mid), budget.limit):
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
    if best is not None:
        cat = Catalog(shortened(best), [s.name for s in ordered])
        for s, line in zip(ordered, lines, strict=True):
            if len(line.flat) > best:
                cat.shortened[s.name] = best
                cat.diagnostics.append(_cut(s, f"description shortened to {best} characters"))
        return cat
    return _fewer(ordered, lines, budget, fits)


def _fewer(
    ordered: list[Skill], lines: list[_Line], budget: Budget, fits: Callable[[str, int], bool]
) -> Catalog:
    """No descriptions, and as many skills as fit, the highest-ranked first (`lines`: the
    skills' catalog lines, in the same order)."""
    names = {s.name: line.render(None, True) for s, line in zip(ordered, lines, strict=True)}
    by_rank = sorted(ordered, key=lambda s: (-s.rank, s.name))

    def attempt(k: int) -> str:
        return _join([names[n] for n in sorted(s.name for s in by_rank[:k])], len(ordered) - k)

    # Every name alone carries no "N more omitted" note, so it can fit where fewer names with the
    # note do not; below that, fewer entries never render longer.
    # A name line is two runs or more: more names than that never fit (see PREAMBLE_RUNS).
    most = max(0, budget.limit - PREAMBLE_RUNS) // 2
    lo, hi, k = 1, min(len(by_rank) - 1, most), 0
    if len(by_rank) <= most and fits(attempt(len(by_rank)), budget.limit):
        lo, k = len(by_rank) + 1, len(by_rank)
    while lo <= hi:  # the most skills that fit
        mid = (lo + hi) // 2
        if fits(attempt(mid), budget.limit):
            k, lo = mid, mid + 1
        else:
            hi = mid - 1
    kept_set = {s.name for s in by_rank[:k]}
    kept = [s for s in ordered if s.name in kept_set]
    omitted = [s for s in reversed(by_rank) if s.name not in kept_set]  # lowest rank first
    cat = Catalog(attempt(k), [s.name for s in kept])
    cat.descriptions_dropped, cat.omitted = True, omitted
    if not kept:  # not even the preamble and one name fit: say so once, send nothing
        cat.diagnostics.append(
            Diagnostic(
                "catalog-off",
                "",
                f"the catalog is off: its budget ({budget.limit:,} {budget.unit}, {budget.reason})"
                " does not hold even one skill name; skills still load when a request matches",
            )
        )
    for s in kept:
        cat.diagnostics.append(_cut(s, "description dropped from the catalog"))
    for s in omitted:
        cat.diagnostics.append(_cut(s, "omitted from the catalog (lowest rank first)"))
    return cat


def published_lines(cat: Catalog, skills: Sequence[Skill]) -> dict[str, str]:
    """name -> the line the catalog carries for it, as cut to fit (skills it omitted have none):
    what each skill costs every turn."""
    published = set(cat.entries)
    out = {}
    for s in skills:
        if s.name in published:
            limit = cat.shortened.get(s.name)
            out[s.name] = _Line.of(s).render(limit, cat.descriptions_dropped)
    return out


def _cut(skill: Skill, what: str) -> Diagnostic:
    return Diagnostic("catalog-cut", str(skill.path), f"{skill.name}: {what} to fit the budget")
