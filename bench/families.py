"""Trigger-eval figures per script family (mca.skills.script: Latin, CJK, other), so false
activations are bounded within each family and not only over a split where English dominates.

Each family's cases are the split's cases with only that family's queries (a case left with
none stays, so all-installed mode installs the same skills as for the whole split). Beside
mca: plain BM25 (bench.triggers.PlainBM25, over the whole split's skills) at the threshold that
gives it at most mca's false-activation rate on those queries, so the two recalls compare at
the same noise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from bench.triggers import (
    Case,
    PlainBM25,
    bm25_chooser,
    bm25_pairs,
    mca_judge,
    run_all_installed,
    run_single,
    unique,
)
from mca.skills.script import FAMILIES, family


def of_family(cases: Sequence[Case], name: str) -> list[Case]:
    """The cases with only the queries written in script family `name`."""
    return [
        dataclasses.replace(c, items=tuple(i for i in c.items if family(i.query) == name))
        for c in cases
    ]


def bm25_at(cases: Sequence[Case], bm: PlainBM25, max_fa: float) -> tuple[float, float, float]:
    """(threshold, recall, false activations) of plain BM25, one skill installed, at its lowest
    threshold with false activations at most max_fa."""
    pairs, pos, neg = bm25_pairs(bm, cases)
    for t in sorted({0.0, *(s for s, _ in pairs)}):
        fa = sum(s > t and not y for s, y in pairs) / neg
        if fa <= max_fa:
            return t, sum(s > t and y for s, y in pairs) / pos, fa
    return float("inf"), 0.0, 0.0


def measure_family(cases: Sequence[Case], bm: PlainBM25) -> dict[str, Any]:
    """mca's figures on these cases, and plain BM25's at mca's false-activation rate."""
    single = run_single(cases, mca_judge).to_json()
    together = run_all_installed(cases, mca_judge).to_json()
    fa = single["false_activations"] or 0.0
    t, recall, bm_fa = bm25_at(cases, bm, fa)
    bm_together = run_all_installed(cases, bm25_chooser(bm, t)).to_json()
    return {
        "should_trigger": single["should_trigger"],
        "should_not_trigger": single["should_not_trigger"],
        "recall": single["recall"],
        "false_activations": single["false_activations"],
        "right_or_none": together["accuracy"],
        "queries_all_installed": together["queries"],
        "bm25": {
            "threshold": t,
            "recall": recall,
            "false_activations": bm_fa,
            "right_or_none": bm_together["accuracy"],
        },
    }


def measure_families(cases: Sequence[Case]) -> dict[str, dict[str, Any]]:
    """Per script family with any query in these cases: measure_family."""
    bm = PlainBM25(unique([s for c in cases for s in c.skills]))
    out = {}
    for name in FAMILIES:
        part = of_family(cases, name)
        if any(c.items for c in part):
            out[name] = measure_family(part, bm)
    return out
