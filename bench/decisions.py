"""`make decisions`: the judgment's decisions on the trigger-eval dev split, pinned.

    python -m bench.decisions

Writes fixtures/judgment/dev-decisions.tsv: for every dev query, in the three ways bench.triggers
installs skills (its skill alone; every single-file dev skill together; a multi file's skills),
the skills the pre-turn stage triggers and the description logits of the two most confident
verdicts. tests/skills/test_decisions.py compares them on whatever interpreter runs the suite,
so a Python whose floats add differently cannot change a decision unseen. Regenerate (on the
oldest supported Python, 3.11) only when a change to the judgment is meant to change them; the
diff then shows which decisions moved.

Reads the repository only: the dev split of fixtures/trigger-evals with its public skills from
fixtures/judgment/dev-skills.jsonl (bench.vendored), even where ../shared/corpus is present, as
training does (bench.judge_data), so a clone writes the same file (the decisions are the same
as from the corpus: tests/skills/test_decisions.py checks both).
"""

from __future__ import annotations

import platform
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bench.triggers import DEV_SET, REPO, Case, load_dev_set, manifest_rows, unique
from bench.vendored import docs as vendored_docs
from mca.skills import judgment
from mca.skills.evals import triggered
from mca.skills.model import Skill
from mca.skills.stage import evaluate
from mca.skills.trigger import SkillSet

FIXTURE = REPO / "fixtures" / "judgment" / "dev-decisions.tsv"
DIGITS = 9  # decimals a logit is written with
NONE = "-"
HEADER = """\
# The judgment's decisions on the trigger-eval dev split, written by `make decisions`
# (python -m bench.decisions) on CPython {version} from the repository (fixtures/trigger-evals,
# fixtures/judgment/dev-skills.jsonl); do not edit by hand.
# tests/skills/test_decisions.py checks them on the running interpreter.
# Columns: mode (alone / together / multi), eval file, query number (from 1), the skills the
# stage triggers (comma-separated, - for none), the description logits of the two most
# confident verdicts ({digits} decimals, - where there is none).
"""


@dataclass(frozen=True)
class Row:
    """One query's decision with one set of skills installed."""

    mode: str
    file: str
    item: int
    fired: tuple[str, ...]
    logits: tuple[float, ...]  # the best two verdicts' (fewer when fewer skills matched)

    def line(self) -> str:
        logits = [f"{x:.{DIGITS}f}" for x in self.logits]
        logits += [NONE] * (2 - len(logits))
        return "\t".join(
            [self.mode, self.file, str(self.item), ",".join(self.fired) or NONE, *logits]
        )


def parse(line: str) -> Row:
    """A fixture line back into a Row (the inverse of Row.line, logits as written)."""
    mode, file, item, fired, *logits = line.rstrip("\n").split("\t")
    return Row(
        mode,
        file,
        int(item),
        tuple(fired.split(",")) if fired != NONE else (),
        tuple(float(x) for x in logits if x != NONE),
    )


def _decide(mode: str, file: str, skills: Sequence[Skill], queries: Sequence[str]) -> list[Row]:
    pool = SkillSet(skills, docs=vendored_docs)
    index = pool.relevance[0]
    out = []
    for n, query in enumerate(queries, 1):
        fired = triggered(evaluate(pool, query, budget=12_000, root=REPO).decisions)
        best = judgment.verdicts(index, query, pool.judgment)[:2]
        out.append(Row(mode, file, n, tuple(fired), tuple(v.logit for v in best)))
    return out


def rows(cases: Sequence[Case]) -> Iterator[Row]:
    """The decisions for these cases, as bench.triggers' run_single and run_all_installed
    install their skills."""
    singles = [c for c in cases if not c.multi]
    for c in singles:
        yield from _decide("alone", c.name, c.skills[:1], [i.query for i in c.items])
    together = unique([c.skills[0] for c in singles])
    for c in singles:
        yield from _decide("together", c.name, together, [i.query for i in c.items])
    for c in cases:
        if c.multi:
            yield from _decide("multi", c.name, c.skills, [i.query for i in c.items])


def dev_cases(vendored: bool = True) -> list[Case]:
    """The dev split's cases, its public skills vendored (or from ../shared/corpus: False); an
    error when any of its skills cannot be read."""
    found = load_dev_set(vendored=vendored)
    dev = {row["file"] for row in manifest_rows(DEV_SET) if row["split"] == "dev"}
    missing = [f for f in found.missing if f in dev]
    if missing:
        raise SystemExit(f"dev-split skills missing: {missing}")
    return found.split("dev")


def render(found: Sequence[Row], version: str | None = None) -> str:
    """The fixture's text for these rows, written on this Python (or as if on `version`)."""
    header = HEADER.format(version=version or platform.python_version(), digits=DIGITS)
    return header + "".join(row.line() + "\n" for row in found)


def main() -> None:
    found = list(rows(dev_cases()))
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(render(found), encoding="utf-8")
    print(f"{len(found)} decisions written to {FIXTURE.relative_to(REPO)}")


if __name__ == "__main__":
    main()
