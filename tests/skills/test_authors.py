"""Training and measuring by author (issue 48): the external pool split by a hash of the source
repository, recorded with licence and provenance; cross-validation folds that never divide a
repository; the operating point chosen from out-of-fold figures; training that never reads
holdout or the pool's measure half; every look at them logged."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from bench import cv_judge, judge_data, looks, train_judge
from bench.authors import LAB, author_of, half_of
from bench.triggers import POOL, load_external, run_single
from bench.vendor_external import labelled, licence_of
from mca.skills import judgment
from mca.skills.script import CJK, LATIN

pytestmark = pytest.mark.xdist_group("authors")


def _manifest() -> list[dict[str, str]]:
    with (POOL / "MANIFEST.tsv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_an_author_is_a_repository() -> None:
    assert author_of("corpus:anthropics__skills/skills/xlsx") == "anthropics/skills"
    assert author_of("corpus:K-Dense-AI__claude-scientific-skills/x/y") == (
        "K-Dense-AI/claude-scientific-skills"
    )
    assert author_of("packs:fixtures/trigger-evals/cjk-skills/dask-scaling") == LAB
    assert author_of("packs:skills/calc-conventions") == LAB


def test_the_pool_is_split_by_the_hash_of_each_repository_and_recorded() -> None:
    rows = _manifest()
    assert len(rows) == len({r["repo"] for r in rows}) >= 20  # a repository once, whole
    for r in rows:
        assert r["half"] == half_of(r["repo"]), r["repo"]
        d = POOL / r["half"] / r["slug"]
        assert licence_of((d / "LICENSE").read_text(encoding="utf-8")) == r["license"]
        assert r["license"] in ("MIT", "Apache-2.0") and len(r["commit"]) == 40
        items = json.loads((d / "evals.json").read_text(encoding="utf-8"))
        assert labelled(items) == items and {i["should_trigger"] for i in items} == {True, False}
        assert (d / "SKILL.md").is_file()
    on_disk = {p.parent.relative_to(POOL).as_posix() for p in POOL.glob("*/*/evals.json")}
    assert on_disk == {f"{r['half']}/{r['slug']}" for r in rows}  # nothing unlisted
    assert {r["half"] for r in rows} == {"train", "measure"}


def test_training_reads_dev_and_the_train_half_only() -> None:
    cases = judge_data.training_cases()
    assert {c.split for c in cases} == {"dev", "external-train"}
    measure = {r["slug"] for r in _manifest() if r["half"] == "measure"}
    assert not measure & {c.name for c in cases}
    assert {c.source for c in cases if c.split == "external-train"} == {
        r["repo"] for r in _manifest() if r["half"] == "train"
    }


def test_the_measure_half_loads_apart_as_external() -> None:
    cases = load_external(POOL, "measure").cases
    assert cases and {c.split for c in cases} == {"external"}
    assert all(half_of(c.source) == "measure" for c in cases)


def test_folds_never_divide_a_repository() -> None:
    folds = cv_judge.by_author(judge_data.training_cases())
    seen: dict[str, str] = {}
    for name, cases in folds.items():
        for c in cases:
            assert seen.setdefault(c.source, name) == name, c.source
    assert len(folds) == cv_judge.FOLDS and len(seen) >= 20


def test_the_operating_point_is_the_highest_offset_within_target_in_every_family() -> None:
    rows = [
        cv_judge.Row(False, 0.5, True, LATIN),
        cv_judge.Row(False, 0.2, False, LATIN),
        cv_judge.Row(False, -0.5, False, CJK),
        cv_judge.Row(True, -9.0, False, CJK),  # fires without its description, any offset
        cv_judge.Row(False, -0.1, False, CJK),
    ] + [cv_judge.Row(False, -5.0, False, f) for f in (LATIN, CJK) for _ in range(8)]
    offset = cv_judge.choose_offset(rows, 0.12)
    assert offset == 0.1  # above it the CJK near-miss at -0.1 fires too: 2 of 11 CJK
    by_family = cv_judge.score(rows, offset)
    assert cv_judge.worst_fa(by_family) <= 0.12
    assert cv_judge.worst_fa(cv_judge.score(rows, offset + 0.02)) > 0.12
    assert by_family[LATIN].tp == 1 and by_family[LATIN].fp == 1  # 1 of 9 Latin: 11%


def test_moving_the_bias_on_logits_gives_what_the_stage_gives() -> None:
    # cv_judge scores offsets on logits (Row.fires), not by running the stage again
    cases = [c for c in judge_data.dev_cases() if not c.multi][:6]
    w = list(judgment.default_model().weights)
    other = cv_judge.without_description(cases, w)
    found = cv_judge.rows(cases, w, other)
    for offset in (-1.0, 0.0, 0.6):
        by_rows = cv_judge.score(found, offset)["all"]
        by_stage = run_single(cases, train_judge.judged((w[0] + offset, *w[1:])))
        assert (by_rows.tp, by_rows.fp, by_rows.fn, by_rows.tn) == (
            by_stage.tp,
            by_stage.fp,
            by_stage.fn,
            by_stage.tn,
        ), offset


def test_the_shipped_operating_point_meets_its_target_out_of_fold() -> None:
    point = judge_data.shipped()["operating_point"]
    assert point["target_fa"] == cv_judge.TARGET_FA
    for fam, fig in point["out_of_fold"].items():
        assert fig["false_activations"] is None or fig["false_activations"] <= 0.08, fam


def test_a_look_is_logged_with_what_was_seen(tmp_path: Path) -> None:
    log = tmp_path / "LOOKS.tsv"
    looks.record("holdout", {"recall": 0.5}, log)
    looks.record("external", {"recall": 0.4}, log)
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[0] == looks.HEADER.strip()
    assert [ln.split("\t")[2] for ln in lines[1:]] == ["holdout", "external"]
    assert json.loads(lines[2].split("\t")[4]) == {"recall": 0.4}
