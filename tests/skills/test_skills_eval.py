"""`mca skills eval`, end to end through the installed command, and the index cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mca.skills.evals import EvalFileError, EvalItem, parse_evals, score_multi, score_single
from mca.skills.index_cache import KEY, IndexCache, doc_key, to_json
from mca.skills.model import Skill
from mca.skills.relevance import make_doc
from tests.skills.conftest import MakeSkill, skill_text

MCA = Path(sys.executable).parent / "mca"
GIF = "Knowledge and utilities for creating animated GIFs optimized for Slack emoji and messages."
XLSX = (
    "Use this skill whenever a spreadsheet file is the primary input or output: open, read,"
    " edit or create .xlsx files, formulas, pivot tables and charts in Excel."
)
SINGLE = [
    {"query": "make me an animated slack gif of a dancing cat", "should_trigger": True},
    {"query": "animated gif emoji for our slack, a spinning logo", "should_trigger": True},
    {"query": "what is the capital of france", "should_trigger": False},
    {"query": "fix the flaky login test", "should_trigger": False},
]


def mca(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "MCA_HOME": str(home / ".mca")}
    env.pop("MCA_DEBUG", None)
    return subprocess.run(
        [str(MCA), "skills", "eval", *args, "-C", str(home)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path, make_skill: MakeSkill) -> Path:
    """Two skills, each with an evals/ file beside its SKILL.md, and a multi-skill file."""
    root = tmp_path / "skills"
    make_skill(root, "slack-gif-creator", skill_text("slack-gif-creator", GIF))
    make_skill(root, "xlsx", skill_text("xlsx", XLSX))
    (root / "slack-gif-creator" / "evals").mkdir()
    (root / "slack-gif-creator" / "evals" / "trigger-evals.json").write_text(json.dumps(SINGLE))
    multi = [
        {"query": "pivot tables and charts in the sales xlsx workbook", "expected": "xlsx"},
        {"query": "make an animated slack gif of a dancing cat", "expected": "slack-gif-creator"},
        {"query": "what does this project do", "expected": None},
    ]
    (root / "xlsx" / "multi-evals.json").write_text(json.dumps(multi))
    return root


@pytest.mark.e2e
def test_eval_file_beside_its_skill(tree: Path) -> None:
    r = mca(str(tree / "slack-gif-creator" / "evals" / "trigger-evals.json"), home=tree.parent)
    assert r.returncode == 0, r.stderr
    assert "skill slack-gif-creator" in r.stdout and "recall" in r.stdout
    r = mca(
        str(tree / "slack-gif-creator" / "evals" / "trigger-evals.json"),
        "--json",
        home=tree.parent,
    )
    obj = json.loads(r.stdout)
    run = obj["files"][0]
    assert run["should_trigger"] == 2 and run["should_not_trigger"] == 2
    assert run["false_activations"] == 0.0 and run["recall"] == 1.0 and run["accuracy"] == 1.0


@pytest.mark.e2e
def test_eval_with_skill_dir_and_all(tree: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "evals.json"
    elsewhere.write_text(json.dumps(SINGLE))
    r = mca(str(elsewhere), "--skill", str(tree / "slack-gif-creator"), "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["files"][0]["skill"] == "slack-gif-creator"
    r = mca("--all", str(tree), "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    files = json.loads(r.stdout)["files"]
    assert sorted(f["kind"] for f in files) == ["multi", "single"]
    multi = next(f for f in files if f["kind"] == "multi")
    assert multi["accuracy"] == 1.0, multi["misses"]


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "mca: "),
        ("{}", "non-empty JSON array"),
        ('[{"query": 3, "should_trigger": true}]', '"query" must be'),
        ('[{"query": "x", "should_trigger": "yes"}]', "true or false"),
        ('[{"query": "x"}]', "neither"),
        ('[{"query": "x", "should_trigger": true}, {"query": "y", "expected": null}]', "mixes"),
        ("[" * 100_000 + "]" * 100_000, "mca: "),
    ],
)
def test_a_malformed_file_is_one_line_and_non_zero(
    tree: Path, tmp_path: Path, content: str, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    r = mca(str(bad), "--skill", str(tree / "xlsx"), home=tmp_path)
    assert r.returncode != 0 and r.stdout == ""
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.e2e
def test_an_oversized_file_and_a_missing_skill_are_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps([{"query": "q" * 1000, "should_trigger": True}] * 5000))
    r = mca(str(big), home=tmp_path)
    assert r.returncode != 0 and "over" in r.stderr and len(r.stderr.splitlines()) == 1
    small = tmp_path / "e.json"
    small.write_text(json.dumps(SINGLE))
    r = mca(str(small), home=tmp_path)
    assert r.returncode != 0 and "--skill DIR" in r.stderr


def test_parse_accepts_both_formats_and_checks_types() -> None:
    single = parse_evals(json.dumps(SINGLE), Path("x.json"))
    assert single.kind == "single" and single.items[0] == EvalItem(SINGLE[0]["query"], True)  # type: ignore[arg-type]
    multi = parse_evals('[{"query": "q", "expected": null}]', Path("m.json"))
    assert multi.kind == "multi" and multi.items[0].label is None
    with pytest.raises(EvalFileError, match="non-empty"):
        parse_evals('[{"query": "  ", "should_trigger": true}]', Path("x.json"))


def test_scores_count_what_they_say() -> None:
    fired = {"a": ["s"], "b": [], "c": ["s"], "d": ["other"]}
    items = [EvalItem("a", True), EvalItem("b", True), EvalItem("c", False), EvalItem("d", False)]
    s = score_single(items, "s", lambda q: fired[q]).to_json()
    assert (s["precision"], s["recall"], s["false_activations"], s["accuracy"]) == (
        0.5,
        0.5,
        0.5,
        0.5,
    )
    multi = [EvalItem("a", "s"), EvalItem("b", None), EvalItem("d", "s"), EvalItem("c", None)]
    m = score_multi(multi, lambda q: fired[q]).to_json()
    assert m["accuracy"] == 0.5 and len(m["misses"]) == 2


# -- the index cache --------------------------------------------------------------------------
def gif() -> Skill:
    return Skill("slack-gif-creator", GIF, Path("/nowhere/g/SKILL.md"), "body")


def test_the_cache_gives_what_indexing_gives(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    first = IndexCache(path)([gif()])
    assert path.is_file()
    again = IndexCache(path)
    assert again([gif()]) == first == [make_doc(gif().name, gif().description)]
    assert again.dropped == 0


def test_a_poisoned_entry_is_dropped_and_the_skill_indexed_again(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    IndexCache(path)([gif()])
    data = json.loads(path.read_text())
    key = doc_key(gif())
    poisons = [
        {"fields": {"desc": {"password": 9}}},  # a word the skill never wrote
        {"fields": {"desc": {"gif": 10**6}}},  # a count its text cannot give
        {"fields": {"desc": {"gif": True}}},  # not a count
        {"fields": {"name": {"animat": 1}}},  # a word of another field
        {"fields": {"desc": ["gif"]}},  # the wrong shape
        {"fields": {"evil": {"gif": 1}}},  # a field that does not exist
        "garbage",
    ]
    for poison in poisons:
        data[KEY][key] = poison
        path.write_text(json.dumps(data))
        cache = IndexCache(path)
        assert cache([gif()]) == [make_doc(gif().name, gif().description)], poison
        assert cache.dropped == 1
        assert json.loads(path.read_text())[KEY][key] == to_json(cache([gif()])[0])


FLAKY_BODY = """# Flaky tests

## When to Use This Skill

- a test passes locally but fails in CI, intermittent timeouts

## Do not use this skill when

- the build itself is broken (compiler errors)

## Steps

1. Reproduce with a seed.
"""


def flaky(body: str = FLAKY_BODY) -> Skill:
    return Skill("flaky", "Debug flaky tests.", Path("/nowhere/flaky/SKILL.md"), body)


def test_the_body_sections_are_cached_and_read_again(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    doc = make_doc(flaky().name, flaky().description, flaky().body)
    assert "intermittent" in doc.fields["when"] and doc.offsets
    IndexCache(path)([flaky()])
    entry = json.loads(path.read_text())[KEY][doc_key(flaky())]
    assert entry["sections"] == list(doc.offsets)
    again = IndexCache(path)
    assert again([flaky()]) == [doc] and again.dropped == 0
    edited = flaky(FLAKY_BODY.replace("timeouts", "time-outs, deadlocks"))
    assert doc_key(edited) != doc_key(flaky())  # a body of another length: indexed again
    assert again([edited]) == [make_doc(edited.name, edited.description, edited.body)]


def test_a_poisoned_body_entry_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    IndexCache(path)([flaky()])
    data = json.loads(path.read_text())
    key = doc_key(flaky())
    good = data[KEY][key]
    steps = FLAKY_BODY.index("## Steps")
    poisons = [
        {**good, "sections": [steps]},  # not a "when to use" heading
        {**good, "sections": [good["sections"][0] + 1]},  # not a heading at all
        {**good, "sections": [10**9]},  # outside the body
        {**good, "sections": "0"},  # the wrong shape
        {**good, "sections": []},  # the terms then have no text to come from
        {
            **good,
            "fields": {**good["fields"], "when": {"reproduc": 1}},
        },  # a word of another section
        {**good, "fields": {**good["fields"], "desc": {"intermittent": 1}}},  # a body word in desc
        {**good, "fields": {**good["fields"], "neg": {"password": 1}}},  # a word never written
        {**good, "extra": 1},  # a key this version never writes
    ]
    for poison in poisons:
        data[KEY][key] = poison
        path.write_text(json.dumps(data))
        cache = IndexCache(path)
        assert cache([flaky()]) == [make_doc(flaky().name, flaky().description, flaky().body)]
        assert cache.dropped == 1, poison


def test_glossary_terms_of_a_cjk_skill_are_kept_but_not_invented(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    skill = Skill("rili", "管理日历和会议", Path("/nowhere/rili/SKILL.md"), "b")
    doc = make_doc(skill.name, skill.description)
    assert doc.fields["desc"]["calendar"] == 1  # the glossary's English for 日历
    IndexCache(path)([skill])
    again = IndexCache(path)
    assert again([skill]) == [doc] and again.dropped == 0
    data = json.loads(path.read_text())
    data[KEY][doc_key(skill)]["fields"]["desc"]["calendar"] = 2  # one 日历 gives one
    path.write_text(json.dumps(data))
    poisoned = IndexCache(path)
    assert poisoned([skill]) == [doc] and poisoned.dropped == 1


def test_a_garbled_or_foreign_cache_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    for content in ("{not json", '{"version": 99, "docs1": {}}', "[]", "\x00" * 100):
        path.write_text(content)
        assert IndexCache(path)([gif()]) == [make_doc(gif().name, gif().description)]
