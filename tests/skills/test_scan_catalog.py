"""Roots and ranks, the bounded walk, collisions, and the budgeted catalog."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mca.assembly.wiring import skills_config
from mca.skills.catalog import Budget, build_catalog
from mca.skills.discover import char_fits, discover
from mca.skills.model import Root, Skill, display_path
from mca.skills.scan import (
    DIR_CAP,
    ROOT_RANKS,
    discover_roots,
    find_skill_files,
    resolve_collisions,
    scan_roots,
)
from tests.conftest import REPO
from tests.skills.conftest import MakeSkill, skill_text

BIG = Budget(10**9, "chars", "test")


def test_root_ranks_are_one_declared_table(tmp_path: Path) -> None:
    assert [r for _, r in ROOT_RANKS.values()] == sorted(
        (r for _, r in ROOT_RANKS.values()), reverse=True
    )
    repo = tmp_path / "repo"
    ws = repo / "pkg" / "app"
    ws.mkdir(parents=True)
    (repo / ".git").mkdir()
    roots = discover_roots(
        ws, tmp_path / "home", tmp_path / "user", [tmp_path / "x", tmp_path / "y"]
    )
    names = [(str(r.path.relative_to(tmp_path)), r.scope, r.rank) for r in roots]
    assert names == [
        ("x", "explicit", 400),
        ("y", "explicit", 399),
        ("repo/pkg/app/.mca/skills", "project", 300),
        ("repo/pkg/app/.agents/skills", "project", 299),
        ("repo/pkg/.mca/skills", "project", 298),
        ("repo/pkg/.agents/skills", "project", 297),
        ("repo/.mca/skills", "project", 296),
        ("repo/.agents/skills", "project", 295),
        ("home/skills", "user", 200),
        ("user/.agents/skills", "user", 199),
    ]


def test_a_skill_dir_is_not_descended(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill(tmp_path, "outer")
    make_skill(tmp_path / "outer" / "references", "inner")
    found, _, _, _ = find_skill_files(tmp_path)
    assert [p.parent.name for p in found] == ["outer"]


def test_depth_limit_and_skip_set(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill(tmp_path / "a/b/c/d", "deep5")  # 5 levels below the root
    make_skill(tmp_path / "a/b/c/d/e", "deep6")
    for skipped in ("node_modules", ".git", ".hidden", "build", "venv", "target", "dist"):
        make_skill(tmp_path / skipped, f"in-{skipped.strip('.')}")
    names = sorted(p.parent.name for p in find_skill_files(tmp_path)[0])
    assert names == ["deep5"]


def test_readme_only_dir_is_silent() -> None:
    result = scan_roots([Root(REPO / "fixtures/broken-packs", "t", 1)])
    assert not any("readme-only" in str(c.path) for c in result.candidates)
    assert result.diagnostics == []


def test_symlinked_dirs_are_followed_without_cycles(tmp_path: Path, make_skill: MakeSkill) -> None:
    elsewhere = tmp_path / "elsewhere"
    make_skill(elsewhere, "linked")
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(elsewhere)
    (root / "loop").symlink_to(root)  # a cycle
    found = find_skill_files(root)[0]
    assert [p.parent.name for p in found] == ["linked"]


def test_symlinked_skill_md_is_rejected(tmp_path: Path, make_skill: MakeSkill) -> None:
    real = make_skill(tmp_path / "real", "target")
    d = tmp_path / "root" / "sneaky"
    d.mkdir(parents=True)
    (d / "SKILL.md").symlink_to(real)
    result = scan_roots([Root(tmp_path / "root", "t", 1)])
    assert [(c.skill, [x.code for x in c.diagnostics]) for c in result.candidates] == [
        (None, ["symlinked-entry"])
    ]


def test_dir_cap_warns(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"d{i:02d}").mkdir()
    _, _, visited, truncated = find_skill_files(tmp_path, dir_cap=10)
    assert truncated and visited == 10
    result = scan_roots([Root(tmp_path, "t", 1)], dir_cap=10)
    assert [d.code for d in result.diagnostics] == ["scan-truncated"]
    assert DIR_CAP == 2000


def test_shadowing_across_scopes_keeps_both_paths() -> None:
    base = REPO / "fixtures/shadowing"
    roots = [
        Root(base / "project/.mca/skills", "project", 300),
        Root(base / "home/skills", "user", 200),
    ]
    d = discover(roots, BIG, char_fits)
    assert d.skills["commit-message"].scope == "project"
    loser = next(c for c in d.candidates if c.status == "shadowed")
    msg = next(x for x in loser.diagnostics if x.code == "shadowed")
    assert msg.level == "warning"
    assert str(base / "home/skills") in msg.message and str(base / "project/.mca") in msg.message


def test_same_rank_duplicates_are_both_withheld(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill(tmp_path, "one", skill_text(name="same"))
    make_skill(tmp_path, "two", skill_text(name="same"))
    d = discover([Root(tmp_path, "t", 1)], BIG, char_fits)
    assert "same" not in d.skills
    withheld = [c for c in d.candidates if c.status == "withheld"]
    assert len(withheld) == 2
    msg = withheld[0].diagnostics[-1].message
    assert str(tmp_path / "one") in msg and str(tmp_path / "two") in msg


def _skills(n: int, desc_len: int = 200) -> list[Skill]:
    return [
        Skill(
            f"skill-{i:03d}",
            f"Use when {'x' * desc_len} {i}",
            Path(f"/s/skill-{i:03d}/SKILL.md"),
            "BODYTEXT",
            rank=i,
        )
        for i in range(n)
    ]


def test_catalog_has_entries_and_no_bodies() -> None:
    skills = _skills(3)
    cat = build_catalog(skills, BIG, char_fits)
    lines = cat.text.splitlines()
    assert len(lines) == 2 + 3 and all(ln.startswith("- skill-") for ln in lines[2:])
    assert "BODYTEXT" not in cat.text and "/s/skill-001" not in cat.text  # no install paths
    assert "read_file skill:NAME" in lines[1]
    assert build_catalog([], BIG, char_fits).text == ""


def test_catalog_shortens_descriptions_fairly() -> None:
    skills = _skills(10)
    full = len(build_catalog(skills, BIG, char_fits).text)
    cat = build_catalog(skills, Budget(full - 500, "chars", "t"), char_fits)
    assert len(cat.text) <= full - 500 and len(cat.shortened) == 10
    assert len(set(cat.shortened.values())) == 1  # the same cap for every skill
    assert all(d.code == "catalog-cut" for d in cat.diagnostics)


def test_catalog_drops_descriptions_then_omits_lowest_rank() -> None:
    skills = _skills(10)
    nothing = build_catalog(skills, Budget(1, "chars", "t"), char_fits)
    assert nothing.text == "" and len(nothing.omitted) == 10  # not even one name fits: off
    assert [d.code for d in nothing.diagnostics if d.code == "catalog-off"] == ["catalog-off"]
    budget = 220
    cat = build_catalog(skills, Budget(budget, "chars", "t"), char_fits)
    assert len(cat.text) <= budget and "Use when" not in cat.text
    omitted = [s.name for s in cat.omitted]
    assert omitted == [f"skill-{i:03d}" for i in range(len(omitted))]  # lowest rank first
    assert 0 < len(omitted) < 10 and f"({len(omitted)} more skills omitted to fit" in cat.text


def test_every_name_is_kept_when_names_fit_and_one_name_with_the_note_does_not() -> None:
    """Two names alone fit; one name and the "1 more skill omitted" note would not: the
    catalog keeps both names, never goes off."""
    skills = _skills(2)
    names = build_catalog(skills, BIG, char_fits)
    both = len(names.text.split("\n- ")[0]) + sum(len(f"\n- {s.name}") for s in skills)
    cat = build_catalog(skills, Budget(both, "chars", "t"), char_fits)
    assert cat.entries == ["skill-000", "skill-001"] and not cat.omitted, cat.text
    assert len(cat.text) <= both and "Use when" not in cat.text


def test_token_budget_uses_the_estimator() -> None:
    from mca.tokens import Estimator

    est = Estimator()
    skills = _skills(120)
    cat = build_catalog(skills, Budget(2560, "tokens", "2% of 128k"), est.fits)
    assert est.count(cat.text) <= 2560 and cat.shortened


def test_fixture_dirs_are_not_modified(tmp_path: Path) -> None:
    before = sorted(os.listdir(REPO / "fixtures/broken-packs"))
    scan_roots([Root(REPO / "fixtures/broken-packs", "t", 1)])
    assert sorted(os.listdir(REPO / "fixtures/broken-packs")) == before


def test_collisions_ignore_skipped_candidates(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill(tmp_path, "a", skill_text(name="dup", description=None))
    make_skill(tmp_path, "b", skill_text(name="dup"))
    result = scan_roots([Root(tmp_path, "t", 1)])
    assert resolve_collisions(result.candidates) == []


def test_parse_cache_is_used_only_while_a_file_is_unchanged(tmp_path: Path) -> None:
    from mca.lab.policies import starter_policy
    from mca.skills.cache import ParseCache
    from mca.skills.scan import scan_roots

    root = tmp_path / "skills"
    (root / "a").mkdir(parents=True)
    skill = root / "a" / "SKILL.md"
    skill.write_text("---\nname: a\ndescription: First.\n---\nbody one\n")
    cache_file = tmp_path / "home" / "cache" / "skills.json"
    roots = [Root(root, "explicit", 400)]

    def scan() -> str:
        result = scan_roots(roots, cache=ParseCache(cache_file))
        [cand] = result.candidates
        assert cand.skill is not None
        return cand.skill.description + "|" + cand.skill.body.strip()

    assert scan() == "First.|body one" and cache_file.exists()
    assert oct(cache_file.stat().st_mode & 0o777) == "0o600"
    assert scan() == "First.|body one"  # from the cache
    skill.write_text("---\nname: a\ndescription: Second.\n---\nbody two\n")
    assert scan() == "Second.|body two"  # edited: parsed again
    cache_file.write_text("{not json")
    assert scan() == "Second.|body two"  # a damaged cache is ignored, then rewritten
    cache_file.write_text('{"version": 1, "entries": [1]}')
    assert scan() == "Second.|body two"  # so is one of the wrong shape
    starter = starter_policy(("split",))
    result = scan_roots(roots, policy=starter, cache=ParseCache(cache_file))
    assert result.candidates[0].skill is not None  # the lab's own parser, never the cache


def test_fits_answers_are_remembered_for_exactly_the_question(tmp_path: Path) -> None:
    """A catalog fitted again (same skills, same budget) needs no tokenizer; anything else
    different (text, limit, encoding) is asked again; a damaged file is ignored."""
    from mca.skills.cache import FitsMemo

    asked: list[tuple[str, int]] = []

    def fits(text: str, limit: int) -> bool:
        asked.append((text, limit))
        return len(text) <= limit

    where = tmp_path / "cache" / "fits.json"
    first = FitsMemo(where, "o200k_base", fits)
    assert first("abc", 3) and not first("abcd", 3)
    first.save()
    assert oct(where.stat().st_mode & 0o777) == "0o600"
    again = FitsMemo(where, "o200k_base", fits)
    assert again("abc", 3) and not again("abcd", 3)
    assert len(asked) == 2  # both answered from the file
    assert again("abc", 2) is False and len(asked) == 3  # another limit: asked
    other = FitsMemo(where, "cl100k_base", fits)
    assert other("abc", 3) and len(asked) == 4  # another encoding: asked
    where.write_text('{"version": 1, "answers": {"x": "yes"}}')
    assert FitsMemo(where, "o200k_base", fits)("abc", 3) and len(asked) == 5


def test_unreadable_dirs_under_a_root_are_diagnostics(tmp_path: Path) -> None:
    from mca.skills.scan import scan_roots

    root = tmp_path / "skills"
    (root / "locked").mkdir(parents=True)
    long_root = Root(tmp_path / ("x" * 300), "explicit", 1)  # ENAMETOOLONG: no traceback
    os.chmod(root / "locked", 0)
    try:
        result = scan_roots([Root(root, "explicit", 2), long_root])
    finally:
        os.chmod(root / "locked", 0o755)
    if os.geteuid() != 0:  # root can read anything
        assert any(d.code == "unreadable-dir" for d in result.diagnostics)


def test_names_equal_after_nfkc_collide(tmp_path: Path) -> None:
    from mca.skills.scan import resolve_collisions, scan_roots

    for root, name in (("a", "calc"), ("b", "ｃａｌｃ")):  # fullwidth letters, NFKC "calc"
        d = tmp_path / root / "calc"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Calc.\n---\nx\n")
    result = scan_roots([Root(tmp_path / "a", "explicit", 400), Root(tmp_path / "b", "user", 200)])
    diags = resolve_collisions(result.candidates)
    assert [c.status for c in result.candidates] == ["loaded", "shadowed"]
    assert diags and diags[0].code == "shadowed"


def test_skills_check_says_what_each_path_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mca.cli import main

    good = tmp_path / "good"
    good.mkdir()
    (good / "SKILL.md").write_text("---\nname: good\ndescription: Good.\n---\nx\n")
    (good / "skill.md").write_text("---\nname: good\ndescription: Good.\n---\nx\n")
    (tmp_path / "empty").mkdir()
    assert main(["skills", "check", str(good)], {}) == 0
    capsys.readouterr()
    for bad in (good / "skill.md", tmp_path / "empty", tmp_path / "missing"):
        assert main(["skills", "check", str(good), str(bad)], {}) == 1
        err = capsys.readouterr().err
        assert str(bad) in err
    assert main(["skills", "check", str(good / "skill.md")], {}) == 1
    assert "not a skill file (discovery only loads SKILL.md)" in capsys.readouterr().err


def test_a_script_that_cannot_run_is_a_diagnostic_not_a_command(tmp_path: Path) -> None:
    from mca.skills.inject import render_skill
    from mca.skills.scan import load_candidate

    d = tmp_path / "tool"
    (d / "scripts").mkdir(parents=True)
    (d / "SKILL.md").write_text("---\nname: tool\ndescription: Tool.\n---\nrun it\n")
    (d / "scripts" / "data.xyz").write_text("not a program\n")
    (d / "scripts" / "run").write_text("#!/bin/sh\necho hi\n")
    (d / "scripts" / "run").chmod(0o755)
    (d / "scripts" / "go.py").write_text("print(1)\n")
    cand = load_candidate(d / "SKILL.md", None)
    [diag] = [x for x in cand.diagnostics if x.code == "script-not-runnable"]
    assert "data.xyz" in diag.message and diag.level == "warning"
    assert cand.skill is not None
    block = render_skill(cand.skill)
    assert not any("data.xyz" in c for c in block.attachments)
    assert any(c.endswith("/scripts/run") for c in block.attachments)
    assert any(c.startswith("python3 ") for c in block.attachments)


def test_strict_skills_refuses_what_was_not_used_as_written(tmp_path: Path) -> None:
    from mca.config.settings import load_settings
    from mca.errors import SkillsRefused
    from mca.skills.runtime import refuse_if_strict, run_discovery
    from mca.tokens import Estimator

    root = tmp_path / "skills"
    for name, extra in (("dropped", "priority: high\n"), ("long", "")):
        (root / name).mkdir(parents=True)
        desc = "x" * 1100 if name == "long" else "Fine."
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {desc}\n{extra}---\nb\n"
        )
    s = load_settings(
        {"MOCK": "1", "MCA_HOME": str(tmp_path / "h"), "HOME": str(tmp_path)}, workspace=tmp_path
    )
    s = s.with_(skills_dirs=(root,), strict_skills=True)
    d = run_discovery(skills_config(s), Estimator())
    assert sorted(d.skills) == ["dropped", "long"]  # both load without --strict-skills
    with pytest.raises(SkillsRefused) as info:
        refuse_if_strict(skills_config(s), d)
    assert "field-dropped" in str(info.value) and "description-too-long" in str(info.value)


def _display_reference(path: Path, workspace: Path, home: Path) -> str:
    """display_path as first written: one relpath per path."""
    text = str(path)
    for base, prefix in ((str(workspace), ""), (str(home), "~/")):
        if text == base:
            return prefix.rstrip("/") or "."
        if text.startswith(base.rstrip("/") + "/"):
            return prefix + text[len(base.rstrip("/")) + 1 :].rstrip("/")
    rel = os.path.relpath(path, workspace)
    return Path(rel).as_posix() if rel.split(os.sep).count("..") <= 4 else text


def test_display_path_is_the_same_with_parents_remembered() -> None:
    parts = ["a", "b", "c", "d", "e", "f", "skills", "x y"]
    paths = [Path("/")]
    for n in range(1, 7):
        for i in range(len(parts)):
            paths.append(Path("/", *[parts[(i + k) % len(parts)] for k in range(n)]))
    homes = [Path("/a"), Path("/home/u"), Path("/")]
    for ws in paths[:40]:
        for home in homes:
            for p in paths:
                assert display_path(p, ws, home) == _display_reference(p, ws, home), (p, ws)


def test_the_walk_remembers_what_a_signature_would_say(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    root = tmp_path / "skills"
    make_skill(root, "plain")
    make_skill(root / "group", "nested")
    outside = make_skill(tmp_path / "elsewhere", "linked")
    (root / "linked").mkdir()
    (root / "linked" / "SKILL.md").symlink_to(outside)
    (root / "dangling").mkdir()
    (root / "dangling" / "SKILL.md").symlink_to(tmp_path / "nowhere")
    roots = [Root(root, "explicit", 400), Root(tmp_path / "missing", "user", 200)]
    d = discover(roots, BIG, char_fits)
    assert len(d.candidates) == 4 and d.seen
    assert d.signature_seen() == d.signature()  # no stat after the walk, the same answer
    (root / "plain" / "SKILL.md").write_text(skill_text(name="plain", description="Changed."))
    assert d.signature_seen() != d.signature()


def test_shown_at_is_replace() -> None:
    from dataclasses import replace

    skill = Skill("a", "Use when a.", Path("/s/a/SKILL.md"), "Body.\n", triggers=("x",))
    assert skill.lowered  # a cached value is carried over as it is
    moved = skill.shown_at("~/s/a")
    assert moved == replace(skill, shown_dir="~/s/a") and moved.dir_label == "~/s/a"
    assert skill.shown_dir == ""
