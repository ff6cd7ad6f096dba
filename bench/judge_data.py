"""mca/data/judgment.json: the judgment's weights and margin, with a hash of the data they were
trained on and the dev figures they give, so a test can re-score dev and fail on drift.

The training data is what the repository holds: the dev split of fixtures/trigger-evals with
its public skills from fixtures/judgment/dev-skills.jsonl (bench.vendored), never the corpus,
so a clone trains and checks the same numbers as a machine that has ../shared/corpus.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import vendored
from bench.triggers import (
    DEV_SET,
    POOL,
    Case,
    load_dev_set,
    load_external,
    mca_judge,
    run_all_installed,
    run_single,
)
from mca.skills import judgment
from mca.skills.model import Skill

DATA = judgment.SHIPPED
NOTE = (
    "Written by `python -m bench.train_judge --write` (see its docstring for the recipe); do not"
    " edit by hand. Trained on the dev split of fixtures/trigger-evals (the skills of"
    " fixtures/judgment/dev-skills.jsonl) and the train half of fixtures/external-pool, never on"
    " holdout or the pool's measure half; the bias and margin are chosen out of fold by author"
    " (bench.cv_judge). tests/skills/test_judgment_data.py re-scores dev with these weights and"
    " fails when the data's hash or the dev figures differ."
)
SINGLE_KEYS = ("queries", "should_trigger", "should_not_trigger", "recall", "false_activations")


def dev_cases(root: Path = DEV_SET) -> list[Case]:
    """The dev split as the repository holds it (vendored skills, even where the corpus is)."""
    return load_dev_set(root, vendored=True).split("dev")


def training_cases(root: Path = DEV_SET, pool: Path = POOL) -> list[Case]:
    """What training reads: the dev split and the external pool's train half (issue 48: other
    authors' skills). Never holdout, never the pool's measure half."""
    return dev_cases(root) + load_external(pool, "train").cases


def _stage_fields(skill: Skill) -> list[tuple[str, object]]:
    return sorted((k, v) for k, v in skill.fields.items() if k in vendored.STAGE_FIELDS)


def digest(cases: Sequence[Case]) -> str:
    """sha256 of everything the cases give training: each file's queries and labels, and each
    skill's name, the fields the stage reads and its index terms by field (what the judgment
    reads: the same from the corpus as from the vendored records)."""
    h = hashlib.sha256()
    for c in cases:
        docs = vendored.docs(c.skills)
        skills = [
            [
                s.name,
                repr(_stage_fields(s)),
                sorted((f, sorted(t.items())) for f, t in d.fields.items()),
            ]
            for s, d in zip(c.skills, docs, strict=True)
        ]
        items = [[i.query, i.label] for i in c.items]
        h.update(json.dumps([c.name, c.split, c.multi, skills, items]).encode() + b"\n")
    return h.hexdigest()


def figures(cases: Sequence[Case], model: judgment.Model | None = None) -> dict[str, Any]:
    """The judgment's dev figures by this model (None: the shipped one): one skill installed
    (recall, false activations) and all installed (right-or-none)."""
    judge = functools.partial(mca_judge, model=model)
    single = run_single(cases, judge).to_json()
    together = run_all_installed(cases, judge).to_json()
    return {
        "single": {k: single[k] for k in SINGLE_KEYS},
        "all_installed": {"queries": together["queries"], "right_or_none": together["accuracy"]},
    }


def document(weights: Sequence[float], margin: float, cases: Sequence[Case]) -> dict[str, Any]:
    """The data file's content for these weights (rounded as shipped) and margin, with the
    figures they give beside the shipped background and competitors."""
    model = replace(judgment.default_model(), weights=tuple(weights), margin=margin)
    return {
        "note": NOTE,
        "weights": dict(zip(judgment.FEATURES, weights, strict=True)),
        "margin": margin,
        "training": {
            "sha256": digest(cases),
            "files": len(cases),
            "queries": sum(len(c.items) for c in cases),
        },
        "dev": figures([c for c in cases if c.split == "dev"], model),
    }


def shipped() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data
