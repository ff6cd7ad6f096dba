"""The public skills as the repository vendors them, with licence and provenance, read here
so that everything made from them runs from a clone without ../shared/corpus:

- fixtures/judgment/dev-skills.jsonl (`python -m bench.vendor_training`): the skills the dev
  split's eval files use, only what the judgment reads (name, description, the frontmatter
  fields the pre-turn stage consults, and the body's "when to use" / "do not use" sections),
  for training (bench.train_judge), its drift test and `make decisions`. A record becomes a
  Skill through mca's own validation, its body being the sections alone.
- fixtures/judgment/public-descriptions.jsonl (`python -m bench.vendor_descriptions`): every
  dev-split public skill's name and description, which the judgment's background and
  competitor table are made from (bench.make_background, bench.make_rivals).

A skill whose licence does not allow its text to be redistributed is vendored as its index
terms only (`terms`: field -> stemmed term -> count, as mca/data/rivals.tsv already ships the
public skills' descriptions): no name field, description or section text. In dev-skills.jsonl
its Skill's description is a placeholder, "(terms only)", and `docs` (a SkillSet DocSource)
gives the judgment its terms, so training reads the same numbers from the repository as from
the corpus.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mca.skills import sections
from mca.skills.model import Skill
from mca.skills.parse import ParsedSkill
from mca.skills.relevance import Doc, make_doc
from mca.skills.terms import terms
from mca.skills.validate import validate

REPO = Path(__file__).resolve().parent.parent
VENDORED = REPO / "fixtures" / "judgment" / "dev-skills.jsonl"
DESCRIPTIONS = REPO / "fixtures" / "judgment" / "public-descriptions.jsonl"
PROFILE_FIELDS = ("name", "desc", "neg")  # what a competitor profile holds (mca.skills.rivals)
# The frontmatter fields the stage reads besides name and description (mca.skills.trigger,
# gates, switches): whether the judgment sees a skill at all, and how it competes.
STAGE_FIELDS = ("disable-model-invocation", "triggers", "paths", "domain", "priority")
END = "\n# .\n"  # a level-1 heading that is no section: it ends every section before it


def sections_only(body: str) -> str:
    """The body cut to the spans the judgment reads (mca.skills.sections): each found heading
    and its text, overlapping spans merged, each span closed by END so no section reads on into
    the next span. make_doc gives the same terms for it as for the whole body."""
    spans: list[list[int]] = []
    for off in sections.find(body):
        h = sections._HEADING.match(body, off)
        assert h is not None
        level, start = len(h.group(1)), h.end()
        end = min(len(body), start + sections.MAX_SECTION)
        for nxt in sections._HEADING.finditer(body, start, end):
            if len(nxt.group(1)) <= level:
                end = nxt.start()
                break
        if spans and off <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([off, end])
    return "".join(body[a:b] + END for a, b in spans)


def _path(ref: str) -> Path:
    return VENDORED.parent / "dev-skills" / ref.partition(":")[2] / "SKILL.md"


def to_skill(record: dict[str, Any]) -> Skill | None:
    """A vendored record as the Skill mca would load (its body: the sections only; for a
    terms-only record, no description and no body)."""
    if "terms" in record:
        fields = {"name": record["name"], "description": "(terms only)"}
        return validate(_path(record["ref"]), ParsedSkill(fields, ""), None).skill
    fields = {k: v for k, v in record["fields"].items()}
    return validate(_path(record["ref"]), ParsedSkill(fields, record["sections"]), None).skill


@functools.cache
def _terms_only() -> dict[Path, Doc]:
    return {_path(ref): Doc(r["terms"]) for ref, r in records().items() if "terms" in r}


def docs(skills: Sequence[Skill]) -> list[Doc]:
    """The judgment's documents for these skills (a SkillSet DocSource): a terms-only vendored
    skill's own terms, make_doc for every other."""
    known = _terms_only()
    return [known.get(s.path) or make_doc(s.name, s.description, s.body) for s in skills]


@functools.cache
def records(path: Path = VENDORED) -> dict[str, dict[str, Any]]:
    """ref ("corpus:<dir>") -> its vendored record; empty when the file is absent."""
    if not path.is_file():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    found = (json.loads(line) for line in lines if line.strip())
    return {r["ref"]: r for r in found}


def vendored_skill(ref: str) -> Skill | None:
    """The vendored skill for a corpus reference (None when it is not vendored)."""
    record = records().get(ref)
    return to_skill(record) if record is not None else None


def held_out(ref: str) -> bool:
    """The trigger-eval split rule (fixtures/trigger-evals/README.md): a corpus skill is in
    holdout when the first 8 hex digits of sha256 of its reference, mod 100, are below 30."""
    return int(hashlib.sha256(ref.encode()).hexdigest()[:8], 16) % 100 < 30


def public_records(path: Path = DESCRIPTIONS) -> list[dict[str, Any]]:
    """The vendored dev-split public skills, in the corpus's path order (bench.vendor_descriptions
    writes them); a held-out reference is an error, not a skill."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [json.loads(line) for line in lines if line.strip()]
    wrong = [r["ref"] for r in found if held_out(r["ref"])]
    if wrong:
        raise ValueError(f"{path}: held-out skills {wrong}")
    return found


def profile(record: dict[str, Any]) -> Doc:
    """A public record's index terms by field: its own `terms` where no text is vendored, else
    make_doc of its name and description (never a body)."""
    if "terms" in record:
        return Doc({f: dict(record["terms"][f]) for f in PROFILE_FIELDS})
    return make_doc(record["name"], record["description"])


def background_terms(record: dict[str, Any]) -> set[str]:
    """The distinct terms a public record adds to the background (bench.make_background): those
    of its name and description; for a terms-only record, of its profile (the vendoring step
    checks that they are the same)."""
    if "terms" in record:
        return {t for f in PROFILE_FIELDS for t in record["terms"][f]}
    return set(terms(record["name"].replace("-", " ") + " " + record["description"]))
